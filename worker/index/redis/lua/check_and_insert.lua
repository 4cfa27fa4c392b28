-- Atomic check-and-insert of a group of articles, decided one after another in the order
-- given. The group is one script call so that what every article shares (arguments, tables,
-- the clock) is set up once. worker/index/redis/scripts.py builds the arguments.
--
-- KEYS[1]   docs HASH: id -> verdict record
-- KEYS[2]   exact HASH: content hash -> id of the original
-- KEYS[3]   ids HASH: sequence number (4 bytes) -> id, for bucket entries
-- KEYS[4]   meta HASH: the layout, whose table spec locates an old entry to replace
-- KEYS[5]   recent inserts: a ring of entries by sequence number (lib.lua)
-- KEYS[6]   sequence counter
-- Shared by the group:
-- ARGV[1]   threshold k (bits): closer articles are duplicates
-- ARGV[2]   related threshold r >= k: closer articles that are not duplicates are related
--           (the tables are laid out for r)
-- ARGV[3]   the most entries read from one bucket (the newest); bounds the script's time.
--           0 reads nothing, so every new fingerprint is indexed (bulk loading)
-- ARGV[4]   bucket key prefix: a bucket's key is prefix .. table number .. ':' .. key in hex
-- ARGV[5]   retention in seconds: older articles no longer match (0: kept for ever)
-- ARGV[6]   verification threshold: a candidate's verification fingerprint must be within
--           it too (-1: no verification)
-- ARGV[7]   T, the number of tables; then per table: its width in bits, its probe radius, and
--           which half of a candidate to compare first (0: bytes 1-4; 4: bytes 5-8): the half
--           its key covers least, which rejects most candidates soonest
-- Then per article, one after another:
--   id; content hash, 16 raw bytes; fingerprint, 8 raw bytes big-endian, or "" when the text
--   is too short; verification fingerprint, 8 raw bytes, or "" (not verified);
--   snapshot: the sequence counter as the caller read it together with the buckets this
--   article probes ("": the caller read nothing, the buckets are searched here);
--   the caller's nearest entry in that read (an entry), or ""; entries it compared; buckets
--   it read only in part; n: how many of the buckets it read start with expired entries (to
--   cut them), then their n keys; then the article's key in each of the T tables (none
--   without a fingerprint)
--
-- Bucket keys are built here from the table keys rather than declared in KEYS: there can be
-- thousands per article. They share the namespace's hash tag with KEYS[1], so in a Redis
-- Cluster they live in the same slot (which Redis checks).
--
-- Each article goes through: replay_or_replace -> exact_match -> near_match -> insert (if an
-- original) -> its record. With a snapshot, the caller has compared the article with every
-- entry of its probed buckets as they were (one read, so the counter and the buckets agree),
-- which takes that work off Redis's one thread; what was inserted since has a higher sequence
-- number and sits in the recent ring, and is compared here (search_since; earlier articles of
-- the group included). If the ring has wrapped since, or the nearest entry is no longer
-- indexed, the buckets are searched here after all (search_buckets).
--
-- An id decided before with the same content gets its verdict again (replayed); with other
-- content, the old article is removed first and the new text decided afresh (replaced).
--
-- Reply: per article {kind, distance or -1, duplicate_of or "", its fingerprint or "",
--         seen_at_ms, replayed, candidates compared, buckets read only in part, replaced}

local k, r, max_read = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local prefix, retention, verify_threshold = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
local MGET_CHUNK = 1000
local bxor, byte = bit.bxor, string.byte

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

-- The tables: width, radius, which half first, and the prefix of their bucket keys.
local tables = {}
for i = 8, 7 + 3 * tonumber(ARGV[7]), 3 do
  local width = tonumber(ARGV[i])
  tables[#tables + 1] = {width = width, radius = tonumber(ARGV[i + 1]),
                         hex = math.ceil(width / 4), half = tonumber(ARGV[i + 2]),
                         prefix = prefix .. (#tables) .. ':'}
end
local function bucket(t, value) return t.prefix .. bit.tohex(value, t.hex) end

local now = redis.call('TIME')
local now_s = tonumber(now[1])
local seen_at = now_s * 1000 + math.floor(tonumber(now[2]) / 1000)
-- Articles first seen before this second have expired: they no longer match.
local cutoff = retention > 0 and now_s - retention or nil

-- The arguments of the article that start at ARGV[a], and where the next article's start.
local function parse_article(a)
  local art = {id = ARGV[a], content = ARGV[a + 1], fp = ARGV[a + 2], verify = ARGV[a + 3],
               snapshot = ARGV[a + 4], found = ARGV[a + 5],
               read_candidates = tonumber(ARGV[a + 6]), read_hot = tonumber(ARGV[a + 7]),
               expired_from = a + 9, keys = {}, candidates = 0, hot = 0}
  art.expired_to = a + 8 + tonumber(ARGV[a + 8])
  local next_article = art.expired_to + 1
  if art.fp ~= '' then
    for j = 1, #tables do art.keys[j] = bit.tobit(tonumber(ARGV[art.expired_to + j])) end
    next_article = art.expired_to + #tables + 1
    art.f = {byte(art.fp, 1, 8)}
  end
  art.kv = art.verify ~= '' and verify_threshold or -1
  if art.kv >= 0 then art.v = {byte(art.verify, 1, 8)} end
  return art, next_article
end

-- Hamming distance between the 8-byte fingerprint at blob[at] and `f` (its bytes).
local function distance(f, blob, at)
  local a1, a2, a3, a4, a5, a6, a7, a8 = byte(blob, at, at + 7)
  return BITS_SET[bxor(a1, f[1])] + BITS_SET[bxor(a2, f[2])] + BITS_SET[bxor(a3, f[3])]
    + BITS_SET[bxor(a4, f[4])] + BITS_SET[bxor(a5, f[5])] + BITS_SET[bxor(a6, f[6])]
    + BITS_SET[bxor(a7, f[7])] + BITS_SET[bxor(a8, f[8])]
end

-- Is the entry at blob[at] within the article's verification threshold (when it has one)?
local function verified(art, blob, at)
  if art.kv < 0 then return true end
  return distance(art.v, blob, at + ENTRY_VERIFY) <= art.kv
end

-- The closest entry within r; between equals, the first seen (lowest sequence number).
local function consider(art, best, d, blob, at)
  local seq, seen_s = struct.unpack('>I4I4', blob, at + ENTRY_SEQ)
  -- (expired entries are cut when read; one can remain behind a clock step back)
  if d <= r and not (cutoff and seen_s < cutoff) and verified(art, blob, at) then
    if best.d == nil or d < best.d or (d == best.d and seq < best.seq) then
      best.d, best.seq, best.blob, best.at = d, seq, blob, at
    end
  end
end

-- Every bucket key within table t's radius of `key`, appended to `out`; owners[i]: the
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
  if t.radius > 0 then flip(key, 0, t.radius) end
end

-- Would the article's probes have led to this fingerprint (8 bytes)? Always within r for an
-- exact layout; for sampled tables, not always. Asked only of entries within r.
local function reachable(art, other)
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

-- Is the entry at blob[at] still indexed? Its sequence number must still name an article
-- whose record has this fingerprint and this sequence number: a caller's bucket cache
-- may hold entries removed since, or from before the index was emptied (whose sequence
-- numbers may have been given out again).
local function is_live(blob, at)
  local seq = entry_seq(blob, at)
  local owner = redis.call('HGET', KEYS[3], seq)
  local owned = owner and redis.call('HGET', KEYS[1], owner)
  return owned and rec_fingerprint(owned) == string.sub(blob, at, at + 7)
    and rec_seq(owned) == seq or false
end

-- The caller's nearest entry, then every entry inserted since its snapshot. False when that
-- cannot decide (see the header).
local function search_since(art, best, since)
  if art.found ~= '' then consider(art, best, distance(art.f, art.found, 1), art.found, 1) end
  art.candidates, art.hot = art.read_candidates, art.read_hot
  for i = art.expired_from, art.expired_to do
    local blob = cutoff and redis.call('GET', ARGV[i])
    if blob then cut_expired(ARGV[i], blob, cutoff) end
  end
  local last = tonumber(redis.call('GET', KEYS[6]) or '0')
  if last - since > RECENT_SLOTS then return false end
  local ring = recent_since(KEYS[5], since, last)
  local f1, f2, f3, f4 = art.f[1], art.f[2], art.f[3], art.f[4]  -- (locals: the loop is hot)
  local seen = 0
  for at = 1, #ring, ENTRY do
    -- (a removed article's slot is zeroed)
    if struct.unpack('>I4', ring, at + ENTRY_SEQ) > since then
      seen = seen + 1
      -- The high half first: most entries are too far there already.
      local a, b, c, e = byte(ring, at, at + 3)
      if BITS_SET[bxor(a, f1)] + BITS_SET[bxor(b, f2)] + BITS_SET[bxor(c, f3)]
          + BITS_SET[bxor(e, f4)] <= r then
        local d = distance(art.f, ring, at)
        if d <= r and reachable(art, string.sub(ring, at, at + 7)) then
          consider(art, best, d, ring, at)
        end
      end
    end
  end
  art.candidates = art.candidates + seen
  return best.d == nil or is_live(best.blob, best.at)
end

-- Every entry of the article's probed buckets, compared here.
local function search_buckets(art, best)
  best.d, art.candidates, art.hot = nil, 0, 0
  local keys, owners = {}, {}
  for j, t in ipairs(tables) do probe_keys(t, art.keys[j], keys, owners) end
  local f = art.f
  for first = 1, #keys, MGET_CHUNK do
    local last = math.min(first + MGET_CHUNK - 1, #keys)
    for j, blob in ipairs(redis.call('MGET', unpack(keys, first, last))) do
      if blob and cutoff then blob = cut_expired(keys[first + j - 1], blob, cutoff) end
      if blob then
        -- This table's key nearly fixes one half of a candidate: compare the other first.
        local h1, h2 = 0, 4
        local p1, p2, p3, p4, q1, q2, q3, q4 = f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8]
        if owners[first + j - 1].half == 4 then
          h1, h2 = 4, 0
          p1, p2, p3, p4, q1, q2, q3, q4 = f[5], f[6], f[7], f[8], f[1], f[2], f[3], f[4]
        end
        local n = #blob / ENTRY
        local start = 0
        if n > max_read then start, art.hot = n - max_read, art.hot + 1 end
        art.candidates = art.candidates + n - start
        for at = start * ENTRY + 1, #blob, ENTRY do
          local a, b, c, e = byte(blob, at + h1, at + h1 + 3)
          local d = BITS_SET[bxor(a, p1)] + BITS_SET[bxor(b, p2)] + BITS_SET[bxor(c, p3)]
            + BITS_SET[bxor(e, p4)]
          if d <= r then
            a, b, c, e = byte(blob, at + h2, at + h2 + 3)
            d = d + BITS_SET[bxor(a, q1)] + BITS_SET[bxor(b, q2)] + BITS_SET[bxor(c, q3)]
              + BITS_SET[bxor(e, q4)]
            consider(art, best, d, blob, at)
          end
        end
      end
    end
  end
end

-- A redelivery of an id already decided: its reply again. New text: the old article is
-- removed. Returns the reply (or nil) and whether the id was replaced.
local function replay_or_replace(art)
  local record = redis.call('HGET', KEYS[1], art.id)
  if not record then return nil, 0 end
  if rec_content(record) == art.content then return reply_from(record, 1, 0, 0, 0), 0 end
  remove_article(KEYS, prefix, art.id, record)
  return nil, 1
end

-- The original with the same content, unless it has expired (then it is removed).
local function exact_match(art)
  local exact_id = redis.call('HGET', KEYS[2], art.content)
  if not exact_id then return nil end
  local original = redis.call('HGET', KEYS[1], exact_id)
  if cutoff and original and rec_seen_ms(original) < cutoff * 1000 then
    remove_article(KEYS, prefix, exact_id, original, cutoff)
    return nil
  end
  return exact_id, original
end

-- The nearest earlier original within r, as {d, seq, blob, at} (d nil: none).
local function near_match(art)
  local best = {}
  if art.snapshot == '' or not search_since(art, best, tonumber(art.snapshot)) then
    search_buckets(art, best)
  end
  return best
end

-- Index an original: its content hash, and with a fingerprint an entry in every table and
-- in the ring. Returns its sequence number (4 bytes; zeros without a fingerprint).
local function insert(art)
  redis.call('HSET', KEYS[2], art.content, art.id)
  if art.fp == '' then return ZERO4 end
  local number = redis.call('INCR', KEYS[6])
  local seq = struct.pack('>I4', number)
  local entry = art.fp .. seq .. struct.pack('>I4', now_s)
    .. (art.verify ~= '' and art.verify or ZERO8)
  for j, t in ipairs(tables) do redis.call('APPEND', bucket(t, art.keys[j]), entry) end
  redis.call('SETRANGE', KEYS[5], recent_offset(number), entry)
  redis.call('HSET', KEYS[3], seq, art.id)
  return seq
end

-- Decide the article whose arguments start at ARGV[a]; returns its reply and where the next
-- article's arguments start.
local function decide(a)
  local art, next_article = parse_article(a)
  local replayed, replaced = replay_or_replace(art)
  if replayed then return replayed, next_article end

  local kind, dist, dup_id, dup_fp = 'unique', 0, '', nil
  local exact_id, original = exact_match(art)
  if exact_id then
    kind, dup_id = 'exact', exact_id
    if original and rec_has_fingerprint(original) then dup_fp = rec_fingerprint(original) end
  elseif art.fp ~= '' and max_read > 0 then
    local best = near_match(art)
    if best.d then
      kind, dist = best.d <= k and 'near' or 'related', best.d
      dup_fp = string.sub(best.blob, best.at, best.at + 7)
      dup_id = redis.call('HGET', KEYS[3], entry_seq(best.blob, best.at))
    end
  end

  -- Only originals (related ones too) are indexed, so a duplicate always points at an article
  -- that was unique.
  local seq = ZERO4
  if kind == 'unique' or kind == 'related' then seq = insert(art) end
  local record = make_record(art.content, art.fp ~= '' and art.fp or nil, kind, dist, dup_fp,
                             seen_at, seq, dup_id)
  redis.call('HSET', KEYS[1], art.id, record)
  return reply_from(record, 0, art.candidates, art.hot, replaced), next_article
end

local replies, a = {}, 8 + 3 * #tables
while a <= #ARGV do
  replies[#replies + 1], a = decide(a)
end
return replies
