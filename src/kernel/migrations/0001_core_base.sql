-- Settings the appliance keeps about itself (setup token state, instance id, ...).
CREATE TABLE core_settings (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
