-- The frame of the scripts that decide articles (check_and_insert.lua over SimHash tables,
-- check_bands.lua over bands): a group of articles decided one after another in the order
-- given, in one call so that what they share (arguments, the clock) is set up once. Each
-- article goes through: replay_or_replace -> exact_match -> the script's search -> insert
-- (unless an exact copy) -> its record -> renew its match (with renewing). The script gives
-- the steps that depend on its postings (decide's `steps`). The rule is
-- worker/index/base.py's Rule, which the memory index applies in Python.
--
-- KEYS[1]   docs HASH: id -> verdict record
-- KEYS[2]   where the exact HASHes start: content hash -> id of the first article with it
-- KEYS[3]   where the ids HASHes start: sequence number (NUMBER bytes) -> id, for postings
--           (lib.lua, exact_key and ids_key)
-- KEYS[4]   meta HASH: the layout (postings.lua)
-- KEYS[5]   recent inserts: a ring of entries by sequence number (lib.lua; tables only)
-- KEYS[6]   sequence counter
-- The frame's arguments (worker/index/redis/frame.py declares the same, in this order):
-- ARGV[1]   epoch: the index's epoch as the caller knows it (lib.lua, changed_index)
-- ARGV[2]   guard: the call's chain and claims (lib.lua, parse_guard); "": none
-- ARGV[3]   gone_prefix: the key prefix of records kept after a deletion or an update
-- ARGV[4]   gone_window_s: for how many seconds they are kept (lib.lua, keep_gone)
-- ARGV[5]   retention_s: older articles no longer match (0: kept for ever)
-- ARGV[6]   renewing: 1: an article matched by a copy is renewed (its retention starts again)
-- ARGV[7]   postings_prefix: where every postings key starts (postings.lua)
-- The script's own arguments follow, from ARGV[FRAME_ARGS + 1].
--
-- Reply: per article {kind, distance or -1, duplicate_of or "", its fingerprint or "",
--         seen_at_ms, replayed, candidates read, buckets read only in part, replaced,
--         sketch bins agreeing, the first article of its cluster, its sequence number (0: in
--         no bucket)}
local FRAME_ARGS = 7
local guard, refused = admit(KEYS[4], ARGV[1], ARGV[2])
if refused then return refused end
local gone_prefix, gone_window = ARGV[3], tonumber(ARGV[4])
local retention, renewing, prefix = tonumber(ARGV[5]), ARGV[6] == '1', ARGV[7]
local byte = string.byte

local now = redis.call('TIME')
local now_s = tonumber(now[1])
local seen_at = now_s * 1000 + math.floor(tonumber(now[2]) / 1000)
-- Articles alive since before this second have expired: they no longer match.
local cutoff = retention > 0 and now_s - retention or nil

local first_seq = tonumber(redis.call('GET', KEYS[6]) or '0')
-- (an article takes at most two numbers, and has more than two arguments)
if first_seq + #ARGV > LAST_NUMBER then
  return redis.error_reply('DEDUP_NUMBERS the index has given out its ' .. LAST_NUMBER
    .. ' sequence numbers: rebuild it into a new namespace (dedup-worker backfill)')
end
-- The counter as this call leaves it so far (it alone changes it while it runs).
local counter = first_seq

-- What the call writes is written at once (flush): the counter, the ring's entries, the ids
-- of its new entries, the records and the exact hashes, one command each for the call (and
-- small hash) rather than five per article. Until then only this call reads them (from
-- `pending`: record_of(), first_with()); whatever may remove an entry flushes first.
local written = first_seq  -- the counter as Redis holds it
local function nothing_pending()
  -- ring: entries written+1 on (tables); owner: seq -> id; doc: id -> record;
  -- first: content hash -> id; line: seq -> a short line
  return {ring = {}, owner = {}, doc = {}, first = {}, line = {}}
end
local pending = nothing_pending()

-- HSET of many fields (field, value, ...), in chunks (Lua's unpack has a limit).
local function hset_all(key, pairs_)
  for i = 1, #pairs_, 1000 do
    redis.call('HSET', key, unpack(pairs_, i, math.min(i + 999, #pairs_)))
  end
end

-- A table's keys and values, one after the other.
local function flat(map)
  local out = {}
  for field, value in pairs(map) do out[#out + 1], out[#out + 2] = field, value end
  return out
end

-- HSET of fields and values (`map`) into the small hash `key_of(field)` gives each, one
-- call per hash.
local function hset_spread(map, key_of)
  local by_key = {}
  for field, value in pairs(map) do
    local key = key_of(KEYS, field)
    local held = by_key[key]
    if not held then
      held = {}
      by_key[key] = held
    end
    held[#held + 1], held[#held + 2] = field, value
  end
  for key, pairs_ in pairs(by_key) do hset_all(key, pairs_) end
end

local function flush()
  if counter > written then
    if #pending.ring > 0 then
      local blob, from = table.concat(pending.ring), recent_offset(written + 1)
      local room = RECENT_SLOTS * ENTRY - from
      redis.call('SETRANGE', KEYS[5], from, string.sub(blob, 1, room))
      if #blob > room then redis.call('SETRANGE', KEYS[5], 0, string.sub(blob, room + 1)) end
    end
    hset_spread(pending.owner, ids_key)
    redis.call('SET', KEYS[6], string.format('%d', counter))
  end
  hset_all(KEYS[1], flat(pending.doc))
  hset_spread(pending.first, exact_key)
  hset_all(lines_key(prefix), flat(pending.line))
  written, pending = counter, nothing_pending()
end

-- Article `id`'s record, as written or pending (nil: none).
local function record_of(id)
  return pending.doc[id] or redis.call('HGET', KEYS[1], id) or nil
end

-- The id of the first article with content hash `content`, as written or pending (nil: none).
local function first_with(content)
  return pending.first[content] or redis.call('HGET', exact_key(KEYS, content), content) or nil
end

-- The next sequence number (NUMBER bytes), for article `id` (in the ids at the next flush).
local function new_number(id)
  counter = counter + 1
  local seq = pack_number(counter)
  pending.owner[seq] = id
  return seq
end

-- The ids and records of the postings numbered `seqs`, as written or pending (an HMGET per
-- ids hash, then one of the records): ids[i] nil for a number no longer indexed, records[i]
-- nil without a record.
local function owners_of(seqs)
  local ids = ids_of(KEYS, seqs)
  local owned = {}
  for i = 1, #seqs do
    ids[i] = ids[i] or pending.owner[seqs[i]]
    if ids[i] then owned[#owned + 1] = ids[i] end
  end
  local held = #owned > 0 and redis.call('HMGET', KEYS[1], unpack(owned)) or {}
  local records, next_record = {}, 0
  for i = 1, #seqs do
    if ids[i] then
      next_record = next_record + 1
      records[i] = pending.doc[ids[i]] or held[next_record] or nil
    end
  end
  return ids, records
end

-- How many bins two sketches agree on; with `need`, any count below it once that many can no
-- longer be reached.
local function agreeing(a, b, need)
  local n = 0
  for i = 1, SKETCH, 8 do
    if need and n + SKETCH - i + 1 < need then return n end
    if string.sub(a, i, i + 7) == string.sub(b, i, i + 7) then
      n = n + 8
    else
      local a1, a2, a3, a4, a5, a6, a7, a8 = byte(a, i, i + 7)
      local b1, b2, b3, b4, b5, b6, b7, b8 = byte(b, i, i + 7)
      if a1 == b1 then n = n + 1 end
      if a2 == b2 then n = n + 1 end
      if a3 == b3 then n = n + 1 end
      if a4 == b4 then n = n + 1 end
      if a5 == b5 then n = n + 1 end
      if a6 == b6 then n = n + 1 end
      if a7 == b7 then n = n + 1 end
      if a8 == b8 then n = n + 1 end
    end
  end
  return n
end

-- A redelivery of an id already decided: its reply again; so too for the redelivery of a
-- message whose article a later message deleted or replaced (its kept record has the same
-- position). New text: the old article is removed (and kept), unless a later message of the
-- same input partition decided it (a redelivery whose record is no longer kept): that one is
-- decided without being indexed or recorded (stale). Returns the reply (or nil), whether the
-- id was replaced, and whether the article is stale.
local function replay_or_replace(art)
  local held = record_of(art.id)
  if held and rec_content(held) == art.content then
    return reply_from(held, 1, 0, 0, 0), 0
  end
  if art.position ~= NO_POSITION then
    local gone = redis.call('GET', gone_key(gone_prefix, art.position, art.id))
    if gone and not is_deletion(gone) and rec_content(gone) == art.content then
      return reply_from(gone, 1, 0, 0, 0), 0
    end
  end
  if not held then return nil, 0 end
  if later_in_partition(rec_position(held), art.position) then return nil, 0, true end
  flush()
  keep_gone(gone_prefix, gone_window, art.id, held)
  remove_article(KEYS, prefix, art.id, held)
  return nil, 1
end

-- The first article with the same content, unless it has expired (then it is removed).
local function exact_match(art)
  local exact_id = first_with(art.content)
  if not exact_id then return nil end
  local original = record_of(exact_id)
  if not original then return nil end
  if cutoff and rec_alive_s(original) < cutoff then
    flush()
    remove_article(KEYS, prefix, exact_id, original, cutoff)
    return nil
  end
  return exact_id, original
end

-- The article starts its retention again: `reindex` (the script's) posts it again under a new
-- number (given its record; returns the number), as the newest of its buckets.
local function renew(id, reindex)
  local held = record_of(id)
  if not held then return end
  local seq = rec_seq(held)
  if seq ~= NO_NUMBER then
    flush()
    seq = reindex(id, held)
  end
  pending.doc[id] = string.sub(held, 1, REC.seq - 1) .. seq .. struct.pack('>I4', now_s)
    .. string.sub(held, REC.alive_s + 4)
end

-- Decide the call's `place`-th article, whose arguments start at ARGV[a]; returns its reply
-- and where the next article's arguments start. The script's `steps`:
--   parse(a): the article (id, content, fp, sketch, position; candidates, hot: what its
--     search read) and where the next one starts;
--   distance(art, fp): the bits between the article's fingerprint and `fp` (8 bytes);
--   search(art): its best match or nil: {owner, record, d (bits, or NO_DISTANCE), agreeing,
--     near (else related), fp};
--   insert(art, place, match): index it (match: what it is a near-duplicate of, or nil);
--     returns its sequence number (NO_NUMBER: not indexed);
--   reindex(id, record): as renew's;
--   path(art, taken) (optional): told the way the article went before its search: 'R' a
--     replay, 'E' an exact copy, 'S' searched, 'U' searched but stale (never indexed).

local function decide(place, a, steps)
  local art, next_article = steps.parse(a)
  local replayed, replaced, stale = replay_or_replace(art)
  if replayed then
    if steps.path then steps.path(art, 'R') end
    return replayed, next_article
  end

  local kind, dist, bins, dup_id, dup_fp, original = 'unique', 0, 0, '', nil, art.id
  local best
  local exact_id, matched = exact_match(art)
  if steps.path then steps.path(art, stale and 'U' or exact_id and 'E' or 'S') end
  if exact_id then
    kind, dup_id, bins = 'exact', exact_id, SKETCH
    local _, first = rec_ids(matched)
    original = first ~= '' and first or exact_id
    if rec_has_fingerprint(matched) then
      dup_fp = rec_fingerprint(matched)
      if art.fp ~= '' then dist = steps.distance(art, dup_fp) end
    end
  else
    best = steps.search(art)
    if best then
      kind, dist, bins = best.near and 'near' or 'related', best.d, best.agreeing
      dup_id, dup_fp = best.owner, best.fp
      if best.near then
        local _, first = rec_ids(best.record)
        original = first ~= '' and first or best.owner
      end
    end
  end
  -- An article sent again with new text may match what repeated its old text: its cluster
  -- then starts at what it matched, never at itself.
  if original == art.id and kind ~= 'related' and kind ~= 'unique' then original = dup_id end

  -- Every article but an exact copy is indexed: a later copy may be closest to a copy.
  local seq = NO_NUMBER
  if kind ~= 'exact' and not stale then
    seq = steps.insert(art, place, kind == 'near' and best or nil)
  end
  local has_fp = art.fp ~= ''
  -- (a unique or related article's cluster starts at itself: its record leaves it out)
  local first = (kind == 'exact' or kind == 'near') and original or ''
  local decided = make_record(art.content, has_fp and art.fp or nil, kind, dist, bins, dup_fp,
                              seen_at, seq, now_s, art.position, has_fp and art.sketch or nil,
                              dup_id, first)
  if stale then return reply_from(decided, 1, art.candidates, art.hot, 0), next_article end
  pending.doc[art.id] = decided
  if renewing and (kind == 'near' or kind == 'exact') then renew(dup_id, steps.reindex) end
  return reply_from(decided, 0, art.candidates, art.hot, replaced), next_article
end

-- Every article from ARGV[a] on; the replies.
local function decide_all(a, steps)
  local replies = {}
  while a <= #ARGV do
    replies[#replies + 1], a = decide(#replies + 1, a, steps)
  end
  flush()
  return replies
end
