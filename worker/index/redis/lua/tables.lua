-- Check-and-insert over SimHash tables (frame.lua runs each article; check_and_insert.lua,
-- sent after this file, gives its search and its insert): the call's arguments, its state, and
-- how candidates are found in a bucket and judged. worker/index/redis/check_and_insert.py
-- builds the arguments.
--
-- KEYS and ARGV[1..FRAME_ARGS]: frame.lua's. Then, shared by the group (A = FRAME_ARGS):
-- ARGV[A+1]  threshold k (bits): candidates within it may be duplicates
-- ARGV[A+2]  the search radius, `radius` >= k (the related threshold, if any): candidates
--            within it may be related (the tables are laid out for it)
-- ARGV[A+3]  the most entries read from one bucket (the newest); bounds the script's time.
--            0 reads nothing, so every new fingerprint is indexed (bulk loading)
-- ARGV[A+4]  sketch bins a duplicate agrees on, at least; ARGV[A+5] the same for a related one
-- ARGV[A+6]  the most candidates compared by their sketches (the nearest)
-- ARGV[A+7]  1: the tables bring every pair within radius together (an exact layout), so
--            whether an article's probes reach a candidate is not asked; 0: asked (sampled
--            tables)
-- ARGV[A+8]  T, the number of tables; then per table: its width in bits, its probe radius, and
--            which half of a candidate to compare first (0: bytes 1-4; 4: bytes 5-8): the half
--            its key covers least, which rejects most candidates soonest
-- Then, with b = A + 9 + 3T:
-- ARGV[b]   a key for this call's record ("": none): for CALL_RECORD_S seconds, the range of
--           sequence numbers the call gave out and each article's number (if it was indexed),
--           which a later call whose read predates this one takes instead of comparing every
--           ring entry of that range
-- ARGV[b+1] the ring entry (RING_CHECK bytes) that the caller's snapshot number ARGV[b+2] held
--           when it read ("": not checked); another one there now means that the index lost
--           writes the read had seen: every article's buckets are searched here
-- ARGV[b+3] P, the earlier calls whose records to take; then per call its record's key and
--           its number of articles (the calls' articles are numbered one after another, from 1)
-- Then per article, one after another:
--   id; content hash, 16 raw bytes; fingerprint, 8 raw bytes big-endian, or "" when the text
--   is too short; its sketch (SKETCH bytes), or ""; the message's position in the input topic
--   (12 bytes: NO_POSITION outside a stream); its short line, as check_bands.lua's ("": none;
--   a line is searched and posted by lines.lua alone, whatever else it is sent with);
--   snapshot: the sequence counter as the caller read it together with the buckets this
--   article probes ("": the caller read nothing, the buckets are searched here);
--   the caller's nearest entries within radius in that read, at most ARGV[8], nearest first, one
--   after another; the earlier articles of this call within radius of it (their places in the
--   call, 1-based, 2 bytes each); those of the earlier calls (their numbers, 4 bytes each);
--   entries it compared; buckets it read only in part; n: how
--   many of the buckets it read start with expired entries (to cut them), then their n keys;
--   then the article's key in each of the T tables (none without a fingerprint)
--
-- Bucket keys are built here from the table keys rather than declared in KEYS: there can be
-- thousands per article. They share the namespace's hash tag with KEYS[1], so in a Redis
-- Cluster they live in the same slot (which Redis checks).
--

local A = FRAME_ARGS
local k, radius, max_read = tonumber(ARGV[A + 1]), tonumber(ARGV[A + 2]), tonumber(ARGV[A + 3])
local duplicate_bins, related_bins = tonumber(ARGV[A + 4]), tonumber(ARGV[A + 5])
local max_candidates = tonumber(ARGV[A + 6])
local MGET_CHUNK = 1000
local CALL_RECORD_S = 10

-- The tables: width, probe radius, which half first, and the prefix of their bucket keys.
local tables = {}
local reaches_all = ARGV[A + 7] == '1'
for i = A + 9, A + 8 + 3 * tonumber(ARGV[A + 8]), 3 do
  local width = tonumber(ARGV[i])
  tables[#tables + 1] = {width = width, probe_radius = tonumber(ARGV[i + 1]),
                         hex = math.ceil(width / 4), half = tonumber(ARGV[i + 2]),
                         prefix = prefix .. (#tables) .. ':'}
end
local function bucket(t, value) return t.prefix .. bit.tohex(value, t.hex) end

local BLOCKS = ring_blocks(radius)
local after_tables = A + 9 + 3 * #tables  -- (ARGV[b] in the header)
local record_key = ARGV[after_tables]

-- This call's ring entries: `inserted[i]`, the i-th article's (if it was indexed);
-- `renewed`, those of the articles it renewed. Every sequence number above `first_seq`
-- is one of them.
local inserted, renewed = {}, {}
-- The ring's entries since a snapshot, up to first_seq (live_entries): the same for every
-- article that shares the snapshot.
local before_call = {}

-- The earlier calls' records: their ranges of numbers (`skipped`), their articles' numbers
-- (`earlier_calls`, by the caller's numbering; nil: not indexed, or the record is gone), the
-- numbers of the articles they renewed.
local skipped, earlier_calls, earlier_renewed = {}, {}, {}
local base = 0
local calls_from = after_tables + 4
for i = calls_from, calls_from - 1 + 2 * tonumber(ARGV[after_tables + 3]), 2 do
  local held = redis.call('GET', ARGV[i])
  if held then
    local from, to, count = struct.unpack('>I6I6I2', held)
    skipped[#skipped + 1] = {from, to}
    local head = 2 * NUMBER + 2
    for place = 1, count do
      local seq = unpack_number(held, head + 1 + (place - 1) * NUMBER)
      if seq ~= 0 then earlier_calls[base + place] = seq end
    end
    for at = head + 1 + count * NUMBER, #held, NUMBER do
      earlier_renewed[#earlier_renewed + 1] = unpack_number(held, at)
    end
  end
  base = base + tonumber(ARGV[i + 1])
end
table.sort(skipped, function(x, y) return x[1] < y[1] end)
-- Whether the caller's snapshot still holds: else no read of it decides.
local snapshots_hold = ARGV[after_tables + 1] == ''
  or ring_holds(KEYS[5], tonumber(ARGV[after_tables + 2]), ARGV[after_tables + 1])

-- A new entry numbered counter + 1 for article `id`, in its buckets (`names`) now and in the
-- ring and the ids at the next flush. Returns its sequence number and the entry.
local function add_entry(id, fp, names)
  local seq = new_number(id)
  local entry = fp .. seq .. struct.pack('>I4', now_s)
  for _, name in ipairs(names) do redis.call('APPEND', name, entry) end
  pending.ring[#pending.ring + 1] = entry
  return seq, entry
end

-- How the short lines' buckets split (postings.lua, split_of), read from the layout once a
-- call needs it.
local line_split
local function line_split_of()
  line_split = line_split or split_of(tonumber(redis.call('HGET', KEYS[4], 'groups')))
  return line_split
end

-- A short line's new number, its ring entry zeroed but for the number (lines.lua), and its
-- postings (`buckets`: as its search read them, or nil).
local function add_line(id, line, buckets)
  local seq = new_number(id)
  pending.ring[#pending.ring + 1] = ZERO8 .. seq .. ZERO4
  lines.post(line, seq, line_split_of(), buckets)
  return seq
end

-- The arguments of the article that start at ARGV[a], and where the next article's start.
local function parse_article(a)
  local art = {id = ARGV[a], content = ARGV[a + 1], fp = ARGV[a + 2], sketch = ARGV[a + 3],
               position = ARGV[a + 4], line = ARGV[a + 5], snapshot = ARGV[a + 6],
               found = ARGV[a + 7], earlier = ARGV[a + 8], earlier_calls = ARGV[a + 9],
               read_candidates = tonumber(ARGV[a + 10]), read_hot = tonumber(ARGV[a + 11]),
               expired_from = a + 13, keys = {}, candidates = 0, hot = 0}
  art.expired_to = a + 12 + tonumber(ARGV[a + 12])
  local next_article = art.expired_to + 1
  if art.fp ~= '' then
    for j = 1, #tables do art.keys[j] = bit.tobit(tonumber(ARGV[art.expired_to + j])) end
    next_article = art.expired_to + #tables + 1
    art.f = {byte(art.fp, 1, 8)}
  end
  return art, next_article
end

-- The entry at blob[at], a candidate if within radius and not expired (each sequence number
-- once).
-- The caller judged expiry a moment earlier: an entry of its list that has expired since is
-- noted (list.dropped), as one beyond its list might then count.
local function add_candidate(art, list, blob, at, from_caller)
  local seq, seen_s = struct.unpack('>I6I4', blob, at + ENTRY_SEQ)
  if list.seqs[seq] then return end
  if cutoff and seen_s < cutoff then
    if from_caller then list.dropped = true end
    return
  end
  local d = distance(art.f, blob, at)
  if d > radius then return end
  list.seqs[seq] = true
  list[#list + 1] = {d = d, seq = seq, fp = string.sub(blob, at, at + 7),
                     from_caller = from_caller}
end

-- Every bucket key within table t's probe radius of `key`, appended to `out`; owners[i]: the
-- table of out[i].
local function probe_keys(t, key, out, owners)
  local function add(value)
    out[#out + 1] = bucket(t, value)
    owners[#out] = t
  end
  add(key)
  local function flip(value, from, left)
    for b = from, t.width - 1 do
      local x = bxor(value, bit.lshift(1, b))
      add(x)
      if left > 1 then flip(x, b + 1, left - 1) end
    end
  end
  if t.probe_radius > 0 then flip(key, 0, t.probe_radius) end
end

-- Would the article's probes have led to this fingerprint (8 bytes)? Always within radius for an
-- exact layout (not asked: the first time, it builds every probed key's name); for sampled
-- tables, not always. Asked only of entries within radius.
local function reachable(art, other)
  if reaches_all then return true end
  if not art.probed then
    art.probed, art.spec = {}, redis.call('HGET', KEYS[4], 'tables')
    local names = {}
    for j, t in ipairs(tables) do probe_keys(t, art.keys[j], names, {}) end
    for _, name in ipairs(names) do art.probed[name] = true end
  end
  for _, name in ipairs(bucket_keys_of(art.spec, other, prefix)) do
    if art.probed[name] then return true end
  end
  return false
end

-- The best of the candidates: the nearest max_candidates of them (ties: first seen) that are
-- still indexed (a caller's cache may hold entries removed since, or from before the index
-- was emptied, whose sequence numbers may have been given out again) are compared by their
-- sketches: first a duplicate (within k, enough bins agreeing), the most similar, then the
-- nearest, then the first seen; else a related one (within radius, fewer bins) the same way.
-- Returns it (or nil), and whether the caller's list held an entry no longer indexed.
local function judge(art, list)
  table.sort(list, function(x, y) return x.d < y.d or (x.d == y.d and x.seq < y.seq) end)
  local best, best_key, stale
  local n_judged = math.min(#list, max_candidates)
  if n_judged == 0 then return nil, false end
  local seqs = {}
  for i = 1, n_judged do seqs[i] = pack_number(list[i].seq) end
  local owners, records = owners_of(seqs)
  for i = 1, n_judged do
    local c, seq, owner, record = list[i], seqs[i], owners[i], records[i]
    if record and rec_fingerprint(record) == c.fp and rec_seq(record) == seq
        and owner ~= art.id then
      local n = agreeing(art.sketch, rec_sketch(record))
      local near = c.d <= k and n >= duplicate_bins
      if near or (radius > k and n >= related_bins) then
        local key = {near and 0 or 1, -n, c.d, c.seq}
        local better = not best_key
        if not better then
          for j = 1, 4 do
            if key[j] ~= best_key[j] then better = key[j] < best_key[j]; break end
          end
        end
        if better then
          best, best_key = {owner = owner, record = record, d = c.d, agreeing = n, near = near,
                            fp = c.fp}, key
        end
      end
    elseif c.from_caller then
      stale = true
    end
  end
  return best, stale
end
