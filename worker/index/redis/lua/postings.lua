-- Where articles are posted, and taking one out (for deletions, for an id re-sent with new
-- text, for a renewed article and for articles older than the retention window). Shared by
-- every script (after lib.lua). The index's layout is stored in its meta record (field
-- `tables`): SimHash tables (worker/layout/tables.py, Table.spec) or "bands:BxR"
-- (worker/layout/bands.py). Every postings key starts with the scripts' postings prefix:
--   tables: prefix .. table number .. ':' .. the table key in hex; a STRING of ENTRY entries
--   bands:  prefix .. 'b' .. the band's number (1 byte) .. its bins (raw bytes); a STRING of
--           POSTING postings, oldest first
--   lines:  prefix .. 'l' .. the band's number (1 byte) .. its 8-byte key; the same
--   prefix .. 'd' .. a sequence number (4 bytes): the numbers of the article's dependents,
--           the near-duplicates posted only under the bands they do not share with it
--   prefix .. 'n': HASH, sequence number -> a short line's units (2 bytes each), then its
--           LINE_BANDS keys (8 bytes each)
local POSTING = 8  -- a band or line posting: seq (4) | indexed (or renewed), unix s (4)
local LINE_BANDS, LINE_KEY = 16, 8

-- Bit p of an 8-byte big-endian fingerprint (p = 0 is the least significant).
local function fingerprint_bit(fp, p)
  local byte = string.byte(fp, 8 - math.floor(p / 8))
  return math.floor(byte / 2 ^ (p % 8)) % 2
end

-- The bucket of `fp` in every table, from the layout's table spec: tables separated by
-- spaces, each runs of bit positions ("63-48" or "5") joined by "." and then "/" and the
-- probe radius.
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

-- The number of bands and of bins per band of a band layout's spec; nil for tables.
local function band_shape(spec)
  local bands, rows = string.match(spec or '', '^bands:(%d+)x(%d+)$')
  if bands then return tonumber(bands), tonumber(rows) end
end

-- The bucket of each band of `sketch`.
local function band_keys_of(spec, sketch, prefix)
  local bands, rows = band_shape(spec)
  local found = {}
  for b = 0, bands - 1 do
    local bins = string.sub(sketch, b * rows + 1, (b + 1) * rows)
    found[b + 1] = prefix .. 'b' .. string.char(b) .. bins
  end
  return found
end

-- The buckets of a short line (`held`: its value in the lines hash, or its units and keys).
local function line_keys_of(held, prefix)
  local found, keys_at = {}, #held - LINE_BANDS * LINE_KEY
  for b = 0, LINE_BANDS - 1 do
    local at = keys_at + b * LINE_KEY + 1
    found[b + 1] = prefix .. 'l' .. string.char(b) .. string.sub(held, at, at + LINE_KEY - 1)
  end
  return found
end
local function line_units(held) return string.sub(held, 1, #held - LINE_BANDS * LINE_KEY) end
local function dependents_key(prefix, seq) return prefix .. 'd' .. seq end
local function lines_key(prefix) return prefix .. 'n' end

local function store(bucket, blob)
  if blob == '' then redis.call('DEL', bucket) else redis.call('SET', bucket, blob) end
end

-- Remove the entry with sequence number `seq` from a bucket of entries of `size` bytes whose
-- number starts `seq_at` bytes in.
local function remove_entry(bucket, seq, size, seq_at)
  local blob = redis.call('GET', bucket)
  if not blob then return end
  for at = 1, #blob, size do
    if string.sub(blob, at + seq_at, at + seq_at + 3) == seq then
      store(bucket, string.sub(blob, 1, at - 1) .. string.sub(blob, at + size))
      return
    end
  end
end

-- Entries are appended as articles are first seen, so the ones older than `cutoff_s` lead
-- the bucket: cut them off. Returns what is left of `blob` (the bucket's value).
local function cut_expired(bucket, blob, cutoff_s)
  local at = 1
  while at <= #blob and entry_seen_s(blob, at) < cutoff_s do at = at + ENTRY end
  if at == 1 then return blob end
  blob = string.sub(blob, at)
  store(bucket, blob)
  return blob
end

-- A band article's postings out of its buckets. Its dependents move to `successor` (the same
-- article under a new number, posted under every band), or else are posted under the bands
-- they skipped: those they share with it. (A dependent taken out since, or renewed, no longer
-- holds its number in the ids hash and its record: it is passed over.) `K`: as in unindex.
local function unpost_bands(K, prefix, spec, record, seq, successor)
  local line = redis.call('HGET', lines_key(prefix), seq)
  if line then  -- (a short line has no dependents)
    for _, bucket in ipairs(line_keys_of(line, prefix)) do remove_entry(bucket, seq, POSTING, 0) end
    redis.call('HDEL', lines_key(prefix), seq)
    return
  end
  if not rec_has_fingerprint(record) then return end
  local mine = band_keys_of(spec, rec_sketch(record), prefix)
  for _, bucket in ipairs(mine) do remove_entry(bucket, seq, POSTING, 0) end
  local key = dependents_key(prefix, seq)
  local dependents = redis.call('GET', key)
  if not dependents then return end
  redis.call('DEL', key)
  if successor then
    redis.call('APPEND', dependents_key(prefix, successor), dependents)
    return
  end
  for at = 1, #dependents, 4 do
    local number = string.sub(dependents, at, at + 3)
    local id = redis.call('HGET', K[3], number)
    local held = id and redis.call('HGET', K[1], id)
    if held and rec_seq(held) == number then
      local posting = number .. struct.pack('>I4', rec_alive_s(held))
      for b, bucket in ipairs(band_keys_of(spec, rec_sketch(held), prefix)) do
        if bucket == mine[b] then redis.call('APPEND', bucket, posting) end
      end
    end
  end
end

-- Take the article whose record is `record` out of its buckets, the ring and the ids hash
-- (its record and its exact text stay). `K`: the scripts' KEYS, which start with docs,
-- exact, ids, meta, recent. With `cutoff_s` (it has expired), every older entry of its
-- table buckets goes with it (band buckets keep theirs: each may have dependents to post).
-- `successor`: the article's new number, when it is renewed (bands).
local function unindex(K, prefix, record, cutoff_s, successor)
  local ids, meta, recent = K[3], K[4], K[5]
  local seq = rec_seq(record)
  if seq == ZERO4 then return end
  local spec = redis.call('HGET', meta, 'tables')
  if band_shape(spec) then
    unpost_bands(K, prefix, spec, record, seq, successor)
    redis.call('HDEL', ids, seq)
    return
  end
  local offset = recent_offset(struct.unpack('>I4', seq))
  if redis.call('GETRANGE', recent, offset + ENTRY_SEQ, offset + ENTRY_SEQ + 3) == seq then
    -- Its number stays, so that a caller can still tell whose slot it is (since.lua); its
    -- fingerprint and seen time are zeroed, which marks it removed.
    redis.call('SETRANGE', recent, offset, ZERO8 .. seq .. ZERO4)
  end
  for _, bucket in ipairs(bucket_keys_of(spec, rec_fingerprint(record), prefix)) do
    if cutoff_s then
      local blob = redis.call('GET', bucket)
      if blob then cut_expired(bucket, blob, cutoff_s) end
    else
      remove_entry(bucket, seq, ENTRY, ENTRY_SEQ)
    end
  end
  redis.call('HDEL', ids, seq)
end

-- Remove article `id` (whose record is `record`) from every structure of the index.
local function remove_article(K, prefix, id, record, cutoff_s)
  local docs, exact = K[1], K[2]
  unindex(K, prefix, record, cutoff_s)
  local content = rec_content(record)
  if redis.call('HGET', exact, content) == id then redis.call('HDEL', exact, content) end
  redis.call('HDEL', docs, id)
end
