-- Community service: exact unread counts. Each conversation numbers its messages
-- (message_seq, bumped in the message's transaction); a participant's read_seq is the number
-- it has read up to. Unread = message_seq > read_seq: exact under concurrency, whatever the
-- timestamps (two messages in one millisecond included).
ALTER TABLE social_conversations ADD COLUMN message_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE social_conversation_participants ADD COLUMN read_seq BIGINT NOT NULL DEFAULT 0;
