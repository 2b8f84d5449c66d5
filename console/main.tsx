/** Entry point of the admin console bundle (scripts/build-console.ts). */
import { render } from "preact";
import { App } from "./app";

try {
  const theme = localStorage.getItem("bunker-theme");
  if (theme === "dark" || theme === "light") document.documentElement.dataset.theme = theme;
} catch {}
render(<App />, document.getElementById("app")!);
