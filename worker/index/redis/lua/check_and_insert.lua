-- Check-and-insert over SimHash tables (frame.lua runs each article; this script gives its
-- search and its insert). worker/index/redis/check_and_insert.py builds the arguments.
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
--   (12 bytes: NO_POSITION outside a stream);
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
-- An article's search (near_match): with a snapshot, the caller
-- has found the article's nearest entries in its probed buckets as they were (one read, so the
-- counter and the buckets agree), which takes that work off Redis's one thread; what was
-- inserted since has a higher sequence number and sits in the recent ring, and is added here
-- (search_since): what other calls inserted, by comparing the ring's entries; what this call
-- inserted, from the caller's list of the earlier articles within radius (the caller compares
-- them far faster than Lua), and the entries it renewed; the same for the earlier calls whose
-- records the caller names (sent before this one's replies were read, so the read predates
-- them): their numbers are left out of the ring, and the entries of the articles the caller
-- lists are taken from the ring by their numbers in the records. A record gone (expired, or
-- its call failed) leaves its entries in the ring. Every candidate is checked to still
-- be indexed, and compared by its sketch. If the ring has wrapped since, the counter is
-- below the snapshot (the index lost writes), or a full list from the caller held an entry no
-- longer indexed or expired since (one beyond it might then count), the buckets are searched
-- here after all (search_buckets).

local A = FRAME_ARGS
local k, radius, max_read = tonumber(ARGV[A + 1]), tonumber(ARGV[A + 2]), tonumber(ARGV[A + 3])
local duplicate_bins, related_bins = tonumber(ARGV[A + 4]), tonumber(ARGV[A + 5])
local max_candidates = tonumber(ARGV[A + 6])
local MGET_CHUNK = 1000
local CALL_RECORD_S = 10
local bxor = bit.bxor

-- Bits set in each byte value. A byte-wise Hamming distance with this table costs a few C
-- calls per candidate, fewer than a 32-bit popcount with bit operations.
local BITS_SET = {[0] = 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 1, 2, 2, 3, 2, 3, 3, 4, 2,
  3, 3, 4, 3, 4, 4, 5, 1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3,
  4, 4, 5, 4, 5, 5, 6, 1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3,
  4, 4, 5, 4, 5, 5, 6, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4,
  5, 5, 6, 5, 6, 6, 7, 1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3,
  4, 4, 5, 4, 5, 5, 6, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4,
  5, 5, 6, 5, 6, 6, 7, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4,
  5, 5, 6, 5, 6, 6, 7, 3, 4, 4, 5, 4, 5, 5, 6, 4, 5, 5, 6, 5, 6, 6, 7, 4, 5, 5, 6, 5, 6, 6, 7, 5,
  6, 6, 7, 6, 7, 7, 8}

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

-- The ring's entries within radius of an article are found by blocks when there are many: each
-- 32-bit half of a fingerprint is cut into the same number of blocks, 2 * #BLOCKS > radius, so
-- that two fingerprints within radius bits have a block within one bit of the other's (else they
-- would differ in two bits or more in every block). An article then looks up its blocks and
-- their one-bit neighbours, ~70 lookups, rather than comparing every entry: exactly the
-- entries within radius, and some others, which are then compared.
local BLOCKS = {}
do
  local per_half = math.ceil((math.floor(radius / 2) + 1) / 2)
  for half = 1, 2 do
    local left = 32
    for i = per_half, 1, -1 do
      local width = math.ceil(left / i)
      left = left - width
      local flips = {}
      for b = 0, width - 1 do flips[b + 1] = bit.lshift(1, b) end
      BLOCKS[#BLOCKS + 1] = {half = half, shift = left, flips = flips,
                             mask = width == 32 and -1 or bit.lshift(1, width) - 1}
    end
  end
end
-- Below about this many entries, comparing each costs Lua less than an article's lookups.
local BLOCKS_FROM = 100
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
    local from, to, count = struct.unpack('>I4I4I2', held)
    skipped[#skipped + 1] = {from, to}
    for place = 1, count do
      local seq = struct.unpack('>I4', held, 7 + place * 4)
      if seq ~= 0 then earlier_calls[base + place] = seq end
    end
    for at = 11 + count * 4, #held, 4 do
      earlier_renewed[#earlier_renewed + 1] = struct.unpack('>I4', held, at)
    end
  end
  base = base + tonumber(ARGV[i + 1])
end
table.sort(skipped, function(x, y) return x[1] < y[1] end)
-- Whether the caller's snapshot still holds: else no read of it decides.
local snapshots_hold = ARGV[after_tables + 1] == ''
  or ring_holds(KEYS[5], tonumber(ARGV[after_tables + 2]), ARGV[after_tables + 1])

-- A new entry numbered counter + 1 for article `id`, in its buckets (`names`) now and in the
-- ring and the ids at the next flush. Returns its sequence number (4 bytes) and the entry.
local function add_entry(id, fp, names)
  local seq = new_number(id)
  local entry = fp .. seq .. struct.pack('>I4', now_s)
  for _, name in ipairs(names) do redis.call('APPEND', name, entry) end
  pending.ring[#pending.ring + 1] = entry
  return seq, entry
end

-- The arguments of the article that start at ARGV[a], and where the next article's start.
local function parse_article(a)
  local art = {id = ARGV[a], content = ARGV[a + 1], fp = ARGV[a + 2], sketch = ARGV[a + 3],
               position = ARGV[a + 4], snapshot = ARGV[a + 5], found = ARGV[a + 6],
               earlier = ARGV[a + 7], earlier_calls = ARGV[a + 8],
               read_candidates = tonumber(ARGV[a + 9]), read_hot = tonumber(ARGV[a + 10]),
               expired_from = a + 12, keys = {}, candidates = 0, hot = 0}
  art.expired_to = a + 11 + tonumber(ARGV[a + 11])
  local next_article = art.expired_to + 1
  if art.fp ~= '' then
    for j = 1, #tables do art.keys[j] = bit.tobit(tonumber(ARGV[art.expired_to + j])) end
    next_article = art.expired_to + #tables + 1
    art.f = {byte(art.fp, 1, 8)}
  end
  return art, next_article
end

-- The high half (bytes 1-4) of the fingerprint at blob[at], as a number.
local function high_half(blob, at)
  local a, b, c, e = byte(blob, at, at + 3)
  return ((a * 256 + b) * 256 + c) * 256 + e
end

-- The live entries of a run of ring entries (a removed article's has its seen time zeroed):
-- {blob = the run, then per live entry its high half and its place in blob}.
-- Parsed once for every article compared with them.
local function live_entries(blob)
  local live = {blob = blob}
  for at = 1, #blob, ENTRY do
    if entry_seen_s(blob, at) ~= 0 then
      live[#live + 1], live[#live + 2] = high_half(blob, at), at
    end
  end
  return live
end

-- The two 32-bit halves of the fingerprint at blob[at] (bit library numbers).
local function halves(blob, at)
  local a1, a2, a3, a4, a5, a6, a7, a8 = byte(blob, at, at + 7)
  return bit.bor(bit.lshift(a1, 24), bit.lshift(a2, 16), bit.lshift(a3, 8), a4),
    bit.bor(bit.lshift(a5, 24), bit.lshift(a6, 16), bit.lshift(a7, 8), a8)
end

-- Block j's value in a fingerprint of halves `high` and `low`.
local function block_value(j, high, low)
  local b = BLOCKS[j]
  return bit.band(bit.rshift(b.half == 1 and high or low, b.shift), b.mask)
end

-- The live entries' places in the blob by block value, per block (built once per ring, for
-- every article compared with it).
local function by_block(live)
  if live.blocks then return live.blocks end
  local index = {}
  for j = 1, #BLOCKS do index[j] = {} end
  for n = 2, #live, 2 do
    local at = live[n]
    local high, low = halves(live.blob, at)
    for j = 1, #BLOCKS do
      local t, v = index[j], block_value(j, high, low)
      local places = t[v]
      if places then places[#places + 1] = at else t[v] = {at} end
    end
  end
  live.blocks = index
  return index
end

-- Hamming distance between the 8-byte fingerprint at blob[at] and `f` (its bytes).
local function distance(f, blob, at)
  local a1, a2, a3, a4, a5, a6, a7, a8 = byte(blob, at, at + 7)
  return BITS_SET[bxor(a1, f[1])] + BITS_SET[bxor(a2, f[2])] + BITS_SET[bxor(a3, f[3])]
    + BITS_SET[bxor(a4, f[4])] + BITS_SET[bxor(a5, f[5])] + BITS_SET[bxor(a6, f[6])]
    + BITS_SET[bxor(a7, f[7])] + BITS_SET[bxor(a8, f[8])]
end

-- The entry at blob[at], a candidate if within radius and not expired (each sequence number
-- once).
-- The caller judged expiry a moment earlier: an entry of its list that has expired since is
-- noted (list.dropped), as one beyond its list might then count.
local function add_candidate(art, list, blob, at, from_caller)
  local seq, seen_s = struct.unpack('>I4I4', blob, at + ENTRY_SEQ)
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
  for i = 1, n_judged do seqs[i] = struct.pack('>I4', list[i].seq) end
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

-- The caller's nearest entries, then every entry inserted since its snapshot. Returns false
-- when that cannot decide (see the header), else the best match or nil.
local function search_since(art, since)
  local list = {seqs = {}}
  for at = 1, #art.found, ENTRY do add_candidate(art, list, art.found, at, true) end
  local full = #art.found >= max_candidates * ENTRY
  art.candidates, art.hot = art.read_candidates, art.read_hot
  for i = art.expired_from, art.expired_to do
    local blob = cutoff and redis.call('GET', ARGV[i])
    if blob then cut_expired(ARGV[i], blob, cutoff) end
  end
  local last = counter
  -- (a counter below the snapshot: the index lost writes since the read)
  if last < since or since > first_seq or last - since > RECENT_SLOTS then return false end
  local ring = before_call[since]
  if not ring then
    -- (without the numbers the earlier calls' records cover)
    local parts, from = {}, since
    for _, range in ipairs(skipped) do
      if range[2] > from then
        parts[#parts + 1] = recent_since(KEYS[5], from, math.min(range[1], first_seq))
        from = range[2]
      end
    end
    parts[#parts + 1] = recent_since(KEYS[5], from, first_seq)
    ring = live_entries(table.concat(parts))
    before_call[since] = ring
  end
  -- Whether the entry at blob[at] is still in its ring slot: one read earlier in this call,
  -- or this call's own, may have been removed or renewed since.
  local function still_in_ring(blob, at)
    local number = struct.unpack('>I4', blob, at + ENTRY_SEQ)
    local entry = string.sub(blob, at, at + ENTRY - 1)
    if number > written then return pending.ring[number - written] == entry end
    local offset = recent_offset(number)
    return redis.call('GETRANGE', KEYS[5], offset, offset + ENTRY - 1) == entry
  end
  local blob = ring.blob
  local function compare(at)
    if distance(art.f, blob, at) <= radius and reachable(art, string.sub(blob, at, at + 7))
        and still_in_ring(blob, at) then
      add_candidate(art, list, blob, at, false)
    end
  end
  if #ring / 2 >= BLOCKS_FROM then
    -- The entries that share a block with the article, or come within one bit of it.
    local index, compared = by_block(ring), {}
    local high, low = halves(art.fp, 1)
    for j, b in ipairs(BLOCKS) do
      local t, v, flips = index[j], block_value(j, high, low), b.flips
      for n = 0, #flips do
        local places = t[n == 0 and v or bxor(v, flips[n])]
        if places then
          for i = 1, #places do
            local at = places[i]
            if not compared[at] then
              compared[at] = true
              compare(at)
            end
          end
        end
      end
    end
  else
    -- The high halves first: most entries are too far there already. The bits of their XOR
    -- are counted a byte at a time with arithmetic, which costs Lua less than calling the
    -- bit library for each byte. Whether the article's probes reach an entry is asked last:
    -- the first time, it builds every probed key.
    local high = high_half(art.fp, 1)
    for n = 1, #ring, 2 do
      local x = bxor(ring[n], high) % 4294967296
      local b1 = x % 256
      x = (x - b1) / 256
      local b2 = x % 256
      x = (x - b2) / 256
      local b3 = x % 256
      if BITS_SET[b1] + BITS_SET[b2] + BITS_SET[b3] + BITS_SET[(x - b3) / 256] <= radius then
        compare(ring[n + 1])
      end
    end
  end
  local seen = #ring / 2
  -- This call's own entries (later calls find them in the ring): those within radius, unless
  -- removed or renewed since they were written.
  local function add_own(entry)
    seen = seen + 1
    if distance(art.f, entry, 1) <= radius and reachable(art, string.sub(entry, 1, 8))
        and still_in_ring(entry, 1) then
      add_candidate(art, list, entry, 1, false)
    end
  end
  for at = 1, #art.earlier, 2 do
    local entry = inserted[struct.unpack('>I2', art.earlier, at)]
    if entry then add_own(entry) end
  end
  for _, entry in ipairs(renewed) do add_own(entry) end
  -- The earlier calls' entries, as the ring holds them (unless removed since).
  local function add_numbered(seq)
    local offset = recent_offset(seq)
    local entry = redis.call('GETRANGE', KEYS[5], offset, offset + ENTRY - 1)
    if entry_seen_s(entry, 1) ~= 0 then add_own(entry) end
  end
  for at = 1, #art.earlier_calls, 4 do
    local seq = earlier_calls[struct.unpack('>I4', art.earlier_calls, at)]
    if seq then add_numbered(seq) end
  end
  for _, seq in ipairs(earlier_renewed) do add_numbered(seq) end
  art.candidates = art.candidates + seen
  local best, stale = judge(art, list)
  if (stale or list.dropped) and full then return false end
  return best
end

-- Every entry of the article's probed buckets, compared here.
local function search_buckets(art)
  art.candidates, art.hot = 0, 0
  local list = {seqs = {}}
  local keys, owners = {}, {}
  for j, t in ipairs(tables) do probe_keys(t, art.keys[j], keys, owners) end
  local f = art.f
  for first = 1, #keys, MGET_CHUNK do
    local last = math.min(first + MGET_CHUNK - 1, #keys)
    for j, blob in ipairs(redis.call('MGET', unpack(keys, first, last))) do
      if blob and cutoff then blob = cut_expired(keys[first + j - 1], blob, cutoff) end
      if blob then
        -- This table's key nearly fixes one half of a candidate: compare the other first.
        local h = owners[first + j - 1].half
        local p1, p2, p3, p4 = f[1 + h], f[2 + h], f[3 + h], f[4 + h]
        local n = #blob / ENTRY
        local start = 0
        if n > max_read then start, art.hot = n - max_read, art.hot + 1 end
        art.candidates = art.candidates + n - start
        for at = start * ENTRY + 1, #blob, ENTRY do
          local a, b, c, e = byte(blob, at + h, at + h + 3)
          if BITS_SET[bxor(a, p1)] + BITS_SET[bxor(b, p2)] + BITS_SET[bxor(c, p3)]
              + BITS_SET[bxor(e, p4)] <= radius then
            add_candidate(art, list, blob, at, false)
          end
        end
      end
    end
  end
  return (judge(art, list))
end

-- The best earlier match within radius, or nil.
local function near_match(art)
  if art.fp == '' or max_read <= 0 then return nil end
  if art.snapshot ~= '' and snapshots_hold then
    local best = search_since(art, tonumber(art.snapshot))
    if best ~= false then return best end
  end
  return search_buckets(art)
end

-- Index an article that exact_match found no live article for: its content hash is now its
-- (a hash naming an article whose record is lost is taken over), and with a fingerprint an
-- entry in every table and in the ring. Returns its sequence number (4 bytes; zeros without
-- a fingerprint) and its entry (nil without).
local function insert(art, place)
  pending.first[art.content] = art.id
  if art.fp == '' then return ZERO4 end
  local names = {}
  for j, t in ipairs(tables) do names[j] = bucket(t, art.keys[j]) end
  local seq
  seq, inserted[place] = add_entry(art.id, art.fp, names)
  return seq
end

-- The article (`held`: its record) moves to the end of its buckets under a new number
-- (frame.lua, renew).
local function reindex(id, held)
  unindex(KEYS, prefix, held)
  local fp = rec_fingerprint(held)
  local spec = redis.call('HGET', KEYS[4], 'tables')
  local seq, entry = add_entry(id, fp, bucket_keys_of(spec, fp, prefix))
  renewed[#renewed + 1] = entry
  return seq
end

local replies = decide_all(calls_from + 2 * tonumber(ARGV[after_tables + 3]), {
  parse = parse_article, search = near_match, insert = insert, reindex = reindex,
  distance = function(art, fp) return distance(art.f, fp, 1) end})
if record_key ~= '' then
  local held = {struct.pack('>I4I4I2', first_seq, counter, #replies)}
  for place = 1, #replies do
    held[#held + 1] = inserted[place] and entry_seq(inserted[place], 1) or ZERO4
  end
  for _, entry in ipairs(renewed) do held[#held + 1] = entry_seq(entry, 1) end
  redis.call('SET', record_key, table.concat(held), 'EX', CALL_RECORD_S)
end
guard_passed(guard)
return replies
