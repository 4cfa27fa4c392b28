-- Shared by check_and_insert.lua, forget.lua and expire.lua (loaded in front of each):
-- removing an article from the index, for deletions, for an id re-sent with new text, and for
-- articles older than the retention window.
--
-- Record layout (bytes, 1-based): 1-16 content hash | 17-24 own fingerprint | 25 kind |
-- 26 flags (1: own fingerprint, 2: match fingerprint) | 27 distance | 28-35 match fingerprint |
-- 36-43 seen_at_ms (big-endian double) | 44-47 sequence number (0: in no bucket) |
-- 48- duplicate_of id
local ZERO4 = string.rep('\0', 4)
-- A bucket entry: fingerprint (8) | sequence number (4) | first seen, unix s (4) |
-- verification fingerprint (8; zeros without one)
local ENTRY = 24
-- The ring of recent inserts: the entry of sequence number s sits in slot (s - 1) % RECENT_SLOTS
-- (check_and_insert.lua compares an article with what was inserted since the caller read
-- its buckets). Keep equal to RECENT_SLOTS in worker/index/redis/keys.py.
local RECENT_SLOTS = 65536

local function recent_offset(seq_number) return ((seq_number - 1) % RECENT_SLOTS) * ENTRY end

-- The ring's entries of sequence numbers since + 1 .. last (at most RECENT_SLOTS of them).
local function recent_since(ring_key, since, last)
  if last <= since then return '' end
  local size = RECENT_SLOTS * ENTRY
  local from = recent_offset(since + 1)
  local stop = from + (last - since) * ENTRY - 1
  local ring = redis.call('GETRANGE', ring_key, from, math.min(stop, size - 1))
  if stop >= size then ring = ring .. redis.call('GETRANGE', ring_key, 0, stop - size) end
  return ring
end

local function seen_ms_of(record) return (struct.unpack('>d', string.sub(record, 36, 43))) end

-- Bit p of an 8-byte big-endian fingerprint (p = 0 is the least significant).
local function fingerprint_bit(fp, p)
  local byte = string.byte(fp, 8 - math.floor(p / 8))
  return math.floor(byte / 2 ^ (p % 8)) % 2
end

-- The bucket of `fp` in every table, from the layout's table spec as stored in the index's
-- meta record (worker/layout/tables.py, Table.spec): tables separated by spaces, each runs of bit
-- positions ("63-48" or "5") joined by "." and then "/radius".
local function bucket_keys_of(spec, fp, prefix)
  local found = {}
  for runs in string.gmatch(spec, '([^ /]+)/%d+') do
    local value, width = 0, 0
    for top, bottom in string.gmatch(runs, '(%d+)-?(%d*)') do
      top = tonumber(top)
      bottom = tonumber(bottom) or top
      for p = top, bottom, -1 do
        value, width = value * 2 + fingerprint_bit(fp, p), width + 1
      end
    end
    found[#found + 1] = prefix .. #found .. ':' .. bit.tohex(value, math.ceil(width / 4))
  end
  return found
end

local function store(bucket, blob)
  if blob == '' then redis.call('DEL', bucket) else redis.call('SET', bucket, blob) end
end

-- Remove the entry with sequence number `seq` from a bucket.
local function remove_entry(bucket, seq)
  local blob = redis.call('GET', bucket)
  if not blob then return end
  for at = 1, #blob, ENTRY do
    if string.sub(blob, at + 8, at + 11) == seq then
      store(bucket, string.sub(blob, 1, at - 1) .. string.sub(blob, at + ENTRY))
      return
    end
  end
end

-- Entries are appended as articles are first seen, so the ones older than `cutoff_s` lead
-- the bucket: cut them off. Returns what is left of `blob` (the bucket's value).
local function cut_expired(bucket, blob, cutoff_s)
  local at = 1
  while at <= #blob and struct.unpack('>I4', blob, at + 12) < cutoff_s do at = at + ENTRY end
  if at == 1 then return blob end
  blob = string.sub(blob, at)
  store(bucket, blob)
  return blob
end

-- Remove article `id` (whose record is `record`) from every structure of the index. `K`: the
-- scripts' KEYS, which start with docs, exact, ids, meta, recent. With `cutoff_s` (the
-- article has expired), every older entry of its buckets goes with it.
local function remove_article(K, prefix, id, record, cutoff_s)
  local docs, exact, ids, meta, recent = K[1], K[2], K[3], K[4], K[5]
  local seq = string.sub(record, 44, 47)
  if seq ~= ZERO4 then
    local offset = recent_offset(struct.unpack('>I4', seq))
    if redis.call('GETRANGE', recent, offset + 8, offset + 11) == seq then
      redis.call('SETRANGE', recent, offset, string.rep('\0', ENTRY))
    end
    local spec = redis.call('HGET', meta, 'tables')
    for _, bucket in ipairs(bucket_keys_of(spec, string.sub(record, 17, 24), prefix)) do
      if cutoff_s then
        local blob = redis.call('GET', bucket)
        if blob then cut_expired(bucket, blob, cutoff_s) end
      else
        remove_entry(bucket, seq)
      end
    end
    redis.call('HDEL', ids, seq)
  end
  local content = string.sub(record, 1, 16)
  if redis.call('HGET', exact, content) == id then redis.call('HDEL', exact, content) end
  redis.call('HDEL', docs, id)
end
