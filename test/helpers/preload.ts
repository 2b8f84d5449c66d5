// Tests must never reach the network or leak logs into the runner's output.
process.env.LOG_LEVEL ??= "silent";
process.env.BUNKER_ENV ??= "test";
