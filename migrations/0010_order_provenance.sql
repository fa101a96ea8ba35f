-- Why a mirrored order looks as it does: the event whose fetch last changed the row (null when no single
-- event did: a backfill page, a repair, or a catch-up list walk with no open event for the order) and how
-- the change came: the event's source ('webhook', 'catchup', 'cli'), or 'backfill' / 'repair'. Both are
-- null on rows last written before this migration. Written by the applier's upsert, with the row.
alter table replica.orders
  add column last_change_event_id text,
  add column last_change_source   text
    check (last_change_source in ('webhook', 'catchup', 'cli', 'backfill', 'repair'));
