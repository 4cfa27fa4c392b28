-- Atomic check-and-insert of a group of articles, decided one after another in the order
-- given (see worker/index/redis/index.py for the caller). The group is one script call so that what
-- every article shares (arguments, tables, the clock) is set up once: ~13 us of Redis's time
-- per call (measured).
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
--   the caller's nearest entry in that read (24 bytes), or ""; entries it compared; buckets
--   it read only in part; n: how many of the buckets it read start with expired entries (to
--   cut them), then their n keys; then the article's key in each of the T tables (none
--   without a fingerprint)
--
-- Buckets are strings of entries (lib.lua) appended in the order articles are first
-- seen. Bucket keys are built here from the table keys rather than declared in KEYS: there
-- can be thousands per article. They share the namespace's hash tag with KEYS[1], so in a
-- Redis Cluster they live in the same slot (which Redis checks).
--
-- With a snapshot, the caller has compared the article with every entry of its probed buckets
-- as they were (one MGET, so the counter and the buckets agree), which takes that work off
-- Redis's one thread. What was inserted since has a higher sequence number and sits in the
-- recent ring: it is compared here (earlier articles of the group included). If the ring has
-- wrapped since, or the nearest entry is no longer indexed, the buckets are searched here
-- after all.
--
-- An id decided before with the same content gets its verdict again (replayed); with other
-- content, the old article is removed first and the new text decided afresh (replaced).
--
-- Reply: per article {kind, distance or -1, duplicate_of or "", its fingerprint or "",
--         seen_at_ms, replayed, candidates compared, buckets read only in part, replaced}
-- The record layout is described in lib.lua.

local k, r, max_read = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local prefix, retention, verify_threshold = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
local KINDS = {[0] = 'unique', [1] = 'exact', [2] = 'near', [3] = 'related'}
local CODES = {unique = 0, exact = 1, near = 2, related = 3}
local ZERO8 = string.rep('\0', 8)
local MGET_CHUNK = 1000

-- Bits set in each byte value. A byte-wise Hamming distance with this table costs a few
-- C calls per candidate, about 3x fewer than a 32-bit popcount with bit operations.
local BITS_SET = {[0] = 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 1, 2, 2, 3, 2, 3, 3, 4, 2,
  3, 3, 4, 3, 4, 4, 5, 1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3,
  4, 4, 5, 4, 5, 5, 6, 1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3,
  4, 4, 5, 4, 5, 5, 6, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4,
  5, 5, 6, 5, 6, 6, 7, 1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3,
  4, 4, 5, 4, 5, 5, 6, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4,
  5, 5, 6, 5, 6, 6, 7, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4,
  5, 5, 6, 5, 6, 6, 7, 3, 4, 4, 5, 4, 5, 5, 6, 4, 5, 5, 6, 5, 6, 6, 7, 4, 5, 5, 6, 5, 6, 6, 7, 5,
  6, 6, 7, 6, 7, 7, 8}

local function reply_from(record, replayed, candidates, hot, replaced)
  local kind, flags, dist = string.byte(record, 25, 27)
  local dup_fp = ''
  if bit.band(flags, 2) ~= 0 then dup_fp = string.sub(record, 28, 35) end
  if kind == 0 then dist = -1 end
  local seen = struct.unpack('>d', string.sub(record, 36, 43))
  return {KINDS[kind], dist, string.sub(record, 48), dup_fp, seen, replayed, candidates, hot,
          replaced}
end

-- The tables: width, radius, which half first; the article's own key is set per article.
local tables = {}
for i = 8, 7 + 3 * tonumber(ARGV[7]), 3 do
  local width = tonumber(ARGV[i])
  tables[#tables + 1] = {width = width, radius = tonumber(ARGV[i + 1]),
                         hex = math.ceil(width / 4), half = tonumber(ARGV[i + 2]),
                         prefix = prefix .. (#tables) .. ':'}
end
local function bucket(t, value) return t.prefix .. bit.tohex(value, t.hex) end

local now = redis.call('TIME')
local seen_at = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
-- Articles first seen before this second have expired: they no longer match.
local cutoff = retention > 0 and tonumber(now[1]) - retention or nil

-- Decide the article whose arguments start at ARGV[a]; returns its reply and where the next
-- article's arguments start.
local function decide(a)
  local id, content, fp, verify = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local snapshot, found = ARGV[a + 4], ARGV[a + 5]
  local expired_from, expired_to = a + 9, a + 8 + tonumber(ARGV[a + 8])
  local next_article = expired_to + 1
  if fp ~= '' then
    for j, t in ipairs(tables) do t.key = bit.tobit(tonumber(ARGV[expired_to + j])) end
    next_article = expired_to + #tables + 1
  end
  local kv = verify ~= '' and verify_threshold or -1

  -- Redelivery of an id already decided: the same verdict again. New text: replace.
  local record = redis.call('HGET', KEYS[1], id)
  local replaced = 0
  if record then
    if string.sub(record, 1, 16) == content then
      return reply_from(record, 1, 0, 0, 0), next_article
    end
    remove_article(KEYS, prefix, id, record)
    replaced = 1
  end

  local kind, dist, dup_id, dup_fp = 'unique', 0, '', nil
  local candidates, hot = 0, 0

  local exact_id = redis.call('HGET', KEYS[2], content)
  if exact_id and cutoff then
    local original = redis.call('HGET', KEYS[1], exact_id)
    if original and seen_ms_of(original) < cutoff * 1000 then
      remove_article(KEYS, prefix, exact_id, original, cutoff)
      exact_id = nil
    end
  end
  if exact_id then
    kind, dup_id = 'exact', exact_id
    local original = redis.call('HGET', KEYS[1], exact_id)
    if original and bit.band(string.byte(original, 26), 1) ~= 0 then
      dup_fp = string.sub(original, 17, 24)
    end
  elseif fp ~= '' and max_read > 0 then
    local bxor, byte = bit.bxor, string.byte
    local f1, f2, f3, f4, f5, f6, f7, f8 = byte(fp, 1, 8)
    local v = {}
    if kv >= 0 then v = {byte(verify, 1, 8)} end
    -- Within kv bits in the verification fingerprint too (when there is one)?
    local function verified(blob, at)
      if kv < 0 then return true end
      local d = 0
      for i = 1, 8 do d = d + BITS_SET[bxor(byte(blob, at + 15 + i), v[i])] end
      return d <= kv
    end
    -- The closest entry within r; between equals, the first seen (lowest sequence number).
    local best_d, best_seq, best_blob, best_at
    local function consider(d, blob, at)
      local seq, seen_s = struct.unpack('>I4I4', blob, at + 8)
      -- (expired entries are cut when read; one can remain behind a clock step back)
      if d <= r and not (cutoff and seen_s < cutoff) and verified(blob, at) then
        if best_d == nil or d < best_d or (d == best_d and seq < best_seq) then
          best_d, best_seq, best_blob, best_at = d, seq, blob, at
        end
      end
    end
    local function distance(blob, at)
      local a1, a2, a3, a4, a5, a6, a7, a8 = byte(blob, at, at + 7)
      return BITS_SET[bxor(a1, f1)] + BITS_SET[bxor(a2, f2)] + BITS_SET[bxor(a3, f3)]
        + BITS_SET[bxor(a4, f4)] + BITS_SET[bxor(a5, f5)] + BITS_SET[bxor(a6, f6)]
        + BITS_SET[bxor(a7, f7)] + BITS_SET[bxor(a8, f8)]
    end

    -- Every bucket key within the table's radius of the article's own key; owners[i]: the
    -- table of out[i].
    local function probe_keys(t, out, owners)
      local function add(value)
        out[#out + 1] = bucket(t, value)
        owners[#out] = t
      end
      add(t.key)
      local function flip(value, from, left)
        for b = from, t.width - 1 do
          local x = bxor(value, bit.lshift(1, b))
          add(x)
          if left > 1 then flip(x, b + 1, left - 1) end
        end
      end
      if t.radius > 0 then flip(t.key, 0, t.radius) end
    end

    -- Would the tables have led to this fingerprint (8 bytes)? Always within r for an exact
    -- layout; for sampled tables, not always. Asked only of entries within r.
    local probed, spec
    local function reachable(other)
      if not probed then
        probed, spec = {}, redis.call('HGET', KEYS[4], 'tables')
        local names = {}
        for _, t in ipairs(tables) do probe_keys(t, names, {}) end
        for _, name in ipairs(names) do probed[name] = true end
      end
      for _, name in ipairs(bucket_keys_of(spec, other, prefix)) do
        if probed[name] then return true end
      end
      return false
    end

    -- Is the entry at blob[at] still indexed? Its sequence number must still name an
    -- article whose record has this fingerprint and this sequence number: a caller's copy
    -- of the buckets may hold entries removed since, or from before the index was emptied
    -- (whose sequence numbers may have been given out again).
    local function is_live(blob, at)
      local seq = string.sub(blob, at + 8, at + 11)
      local owner = redis.call('HGET', KEYS[3], seq)
      local owned = owner and redis.call('HGET', KEYS[1], owner)
      return owned and string.sub(owned, 17, 24) == string.sub(blob, at, at + 7)
        and string.sub(owned, 44, 47) == seq or false
    end

    -- The caller's nearest entry, then every entry inserted since its snapshot. False when
    -- that cannot decide (see the header).
    local function search_since(since)
      if found ~= '' then consider(distance(found, 1), found, 1) end
      candidates, hot = tonumber(ARGV[a + 6]), tonumber(ARGV[a + 7])
      for i = expired_from, expired_to do
        local blob = cutoff and redis.call('GET', ARGV[i])
        if blob then cut_expired(ARGV[i], blob, cutoff) end
      end
      local last = tonumber(redis.call('GET', KEYS[6]) or '0')
      if last - since > RECENT_SLOTS then return false end
      local ring = recent_since(KEYS[5], since, last)
      for at = 1, #ring, ENTRY do
        -- (a removed article's slot is zeroed)
        if struct.unpack('>I4', ring, at + 8) > since then
          candidates = candidates + 1
          -- The high half first: most entries are too far there already.
          local a, b, c, e = byte(ring, at, at + 3)
          if BITS_SET[bxor(a, f1)] + BITS_SET[bxor(b, f2)] + BITS_SET[bxor(c, f3)]
              + BITS_SET[bxor(e, f4)] <= r then
            local d = distance(ring, at)
            if d <= r and reachable(string.sub(ring, at, at + 7)) then consider(d, ring, at) end
          end
        end
      end
      return best_d == nil or is_live(best_blob, best_at)
    end

    local function search_buckets()
      best_d, candidates, hot = nil, 0, 0
      local keys, owners = {}, {}
      for _, t in ipairs(tables) do probe_keys(t, keys, owners) end
      for first = 1, #keys, MGET_CHUNK do
        local last = math.min(first + MGET_CHUNK - 1, #keys)
        for j, blob in ipairs(redis.call('MGET', unpack(keys, first, last))) do
          if blob and cutoff then blob = cut_expired(keys[first + j - 1], blob, cutoff) end
          if blob then
            -- This table's key nearly fixes one half of a candidate: compare the other first.
            local h1, h2 = 0, 4
            local p1, p2, p3, p4, q1, q2, q3, q4 = f1, f2, f3, f4, f5, f6, f7, f8
            if owners[first + j - 1].half == 4 then
              h1, h2 = 4, 0
              p1, p2, p3, p4, q1, q2, q3, q4 = f5, f6, f7, f8, f1, f2, f3, f4
            end
            local n = #blob / ENTRY
            local start = 0
            if n > max_read then start, hot = n - max_read, hot + 1 end
            candidates = candidates + n - start
            for at = start * ENTRY + 1, #blob, ENTRY do
              -- Distance over one half first; most candidates are already too far there.
              local a, b, c, e = byte(blob, at + h1, at + h1 + 3)
              local d = BITS_SET[bxor(a, p1)] + BITS_SET[bxor(b, p2)] + BITS_SET[bxor(c, p3)]
                + BITS_SET[bxor(e, p4)]
              if d <= r then
                a, b, c, e = byte(blob, at + h2, at + h2 + 3)
                d = d + BITS_SET[bxor(a, q1)] + BITS_SET[bxor(b, q2)] + BITS_SET[bxor(c, q3)]
                  + BITS_SET[bxor(e, q4)]
                consider(d, blob, at)
              end
            end
          end
        end
      end
    end

    if snapshot == '' or not search_since(tonumber(snapshot)) then search_buckets() end
    if best_d then
      kind, dist = best_d <= k and 'near' or 'related', best_d
      dup_fp = string.sub(best_blob, best_at, best_at + 7)
      dup_id = redis.call('HGET', KEYS[3], string.sub(best_blob, best_at + 8, best_at + 11))
    end
  end

  -- Only originals (related ones too) are indexed, so a duplicate always points at an article
  -- that was unique.
  local seq = ZERO4
  if kind == 'unique' or kind == 'related' then
    redis.call('HSET', KEYS[2], content, id)
    if fp ~= '' then
      local number = redis.call('INCR', KEYS[6])
      seq = struct.pack('>I4', number)
      local entry = fp .. seq .. struct.pack('>I4', tonumber(now[1]))
        .. (verify ~= '' and verify or ZERO8)
      for _, t in ipairs(tables) do redis.call('APPEND', bucket(t, t.key), entry) end
      redis.call('SETRANGE', KEYS[5], recent_offset(number), entry)
      redis.call('HSET', KEYS[3], seq, id)
    end
  end

  local flags = 0
  if fp ~= '' then flags = flags + 1 end
  if dup_fp then flags = flags + 2 end
  record = content .. (fp ~= '' and fp or ZERO8) .. string.char(CODES[kind], flags, dist)
    .. (dup_fp or ZERO8) .. struct.pack('>d', seen_at) .. seq .. dup_id
  redis.call('HSET', KEYS[1], id, record)
  return reply_from(record, 0, candidates, hot, replaced), next_article
end

local replies, a = {}, 8 + 3 * #tables
while a <= #ARGV do
  replies[#replies + 1], a = decide(a)
end
return replies
