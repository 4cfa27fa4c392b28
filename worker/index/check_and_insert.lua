-- Atomic check-and-insert of one article (see worker/index/redis.py for the caller).
--
-- KEYS[1]   docs HASH: id -> verdict record
-- KEYS[2]   exact HASH: content hash -> id of the original
-- KEYS[3..] one band bucket ZSET per band (none when the text has no fingerprint)
-- ARGV[1]   article id
-- ARGV[2]   content hash, 16 raw bytes
-- ARGV[3]   fingerprint, 8 raw bytes big-endian, or "" when the text is too short
-- ARGV[4]   threshold k (bits)
-- ARGV[5]   the most entries read from one bucket (the newest); bounds the script's time
--
-- Reply: {kind, distance or -1, duplicate_of or "", its fingerprint or "", seen_at_ms, replayed,
--         candidates compared, buckets read only in part}
--    or {"conflict"} when the id was indexed before with other content.
--
-- Record layout (bytes, 1-based): 1-16 content hash | 17-24 own fingerprint | 25 kind |
-- 26 flags (1: own fingerprint, 2: match fingerprint) | 27 distance | 28-35 match fingerprint |
-- 36-43 seen_at_ms (big-endian double) | 44- duplicate_of id

local id, content, fp, k = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local max_read = tonumber(ARGV[5])
local KINDS = {[0] = 'unique', [1] = 'exact', [2] = 'near'}
local CODES = {unique = 0, exact = 1, near = 2}
local ZERO8 = string.rep('\0', 8)

local function popcount32(x)
  x = x - bit.band(bit.rshift(x, 1), 0x55555555)
  x = bit.band(x, 0x33333333) + bit.band(bit.rshift(x, 2), 0x33333333)
  x = bit.band(x + bit.rshift(x, 4), 0x0F0F0F0F)
  return bit.rshift(bit.tobit(x * 0x01010101), 24)
end

-- Distance from the article's own fingerprint (unpacked once) to the fingerprint that starts
-- `other` (a bucket member: 8 bytes of fingerprint, then the id; unpack reads the first 8).
local own_hi, own_lo = 0, 0
if fp ~= '' then own_hi, own_lo = struct.unpack('>I4I4', fp) end
local function distance(other)
  local hi, lo = struct.unpack('>I4I4', other)
  return popcount32(bit.bxor(own_hi, hi)) + popcount32(bit.bxor(own_lo, lo))
end

-- Byte order, independent of the server's locale (Lua's '<' on strings uses strcoll).
local function bytes_less(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

local function reply_from(record, replayed, candidates, hot)
  local kind, flags, dist = string.byte(record, 25, 27)
  local dup_fp = ''
  if bit.band(flags, 2) ~= 0 then dup_fp = string.sub(record, 28, 35) end
  if kind == 0 then dist = -1 end
  local seen = struct.unpack('>d', string.sub(record, 36, 43))
  return {KINDS[kind], dist, string.sub(record, 44), dup_fp, seen, replayed, candidates, hot}
end

-- Redelivery of an id already decided: the same verdict again.
local record = redis.call('HGET', KEYS[1], id)
if record then
  if string.sub(record, 1, 16) ~= content then return {'conflict'} end
  return reply_from(record, 1, 0, 0)
end

local now = redis.call('TIME')
local seen_at = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local kind, dist, dup_id, dup_fp = 'unique', 0, '', nil
local candidates, hot = 0, 0

local exact_id = redis.call('HGET', KEYS[2], content)
if exact_id then
  kind, dup_id = 'exact', exact_id
  local original = redis.call('HGET', KEYS[1], exact_id)
  if original and bit.band(string.byte(original, 26), 1) ~= 0 then
    dup_fp = string.sub(original, 17, 24)
  end
elseif fp ~= '' then
  local best_d, best_s
  for i = 3, #KEYS do
    local members = redis.call('ZRANGE', KEYS[i], -max_read, -1)
    candidates = candidates + #members
    if #members == max_read and redis.call('ZCARD', KEYS[i]) > max_read then hot = hot + 1 end
    for j = 1, #members do
      local member = members[j]
      local d = distance(member)
      if d <= k and (best_d == nil or d <= best_d) then
        local cid = string.sub(member, 9)
        -- Scores (first-seen times) are only needed to break ties, and matches are rare.
        local s = tonumber(redis.call('ZSCORE', KEYS[i], member))
        if cid ~= id and (best_d == nil or d < best_d or s < best_s
            or (s == best_s and bytes_less(cid, dup_id))) then
          best_d, best_s, dup_id, dup_fp = d, s, cid, string.sub(member, 1, 8)
        end
      end
    end
  end
  if best_d then kind, dist = 'near', best_d end
end

-- Only originals are indexed, so a duplicate always points at an article that was unique.
if kind == 'unique' then
  redis.call('HSET', KEYS[2], content, id)
  if fp ~= '' then
    local member = fp .. id
    for i = 3, #KEYS do redis.call('ZADD', KEYS[i], seen_at, member) end
  end
end

local flags = 0
if fp ~= '' then flags = flags + 1 end
if dup_fp then flags = flags + 2 end
record = content .. (fp ~= '' and fp or ZERO8) .. string.char(CODES[kind], flags, dist)
  .. (dup_fp or ZERO8) .. struct.pack('>d', seen_at) .. dup_id
redis.call('HSET', KEYS[1], id, record)
return reply_from(record, 0, candidates, hot)
