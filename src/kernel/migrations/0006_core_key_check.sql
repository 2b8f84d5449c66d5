-- A value derived from the master key, written on first start: a later start with another
-- key (wrong MASTER_KEY, or a restore without master.key) is refused instead of failing
-- on the first decryption. The value reveals nothing about the key (HKDF, then HMAC).
CREATE TABLE core_key_check (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  check_value TEXT NOT NULL,
  created_at  TEXT NOT NULL
);
