-- Taking an article out of its postings (for deletions, for an id re-sent with new text,
-- for a renewed article and for articles older than the retention window), and out of the
-- rest of the index. Shared by every script (after lib.lua and postings.lua).

local function store(bucket, blob)
  if blob == '' then redis.call('DEL', bucket) else redis.call('SET', bucket, blob) end
end

-- Remove the entry with sequence number `seq` from a bucket of entries of `size` bytes whose
-- number starts `seq_at` bytes in.
local function remove_entry(bucket, seq, size, seq_at)
  local blob = redis.call('GET', bucket)
  if not blob then return end
  for at = 1, #blob, size do
    if string.sub(blob, at + seq_at, at + seq_at + NUMBER - 1) == seq then
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

-- Remove the posting of number `seq` from string `key`, whose postings start with `check`;
-- whether it was there.
local function remove_from(key, check, seq)
  local blob = redis.call('GET', key)
  if not blob then return false end
  local wanted, size, from = check .. seq, #check + POSTING_TAIL, 1
  while true do
    local at = string.find(blob, wanted, from, true)
    if not at then return false end
    if (at - 1) % size == 0 then
      store(key, string.sub(blob, 1, at - 1) .. string.sub(blob, at + size))
      return true
    end
    from = at + 1
  end
end

-- Remove the posting of number `seq` from `bucket` (a band or line bucket).
local function remove_posting(bucket, seq)
  if not remove_from(bucket[1], bucket[2], seq) then
    remove_from(own_key(bucket), bucket[2], seq)
  end
end

-- If number `seq` is a short line's (lines.lua), its postings out of its line buckets
-- (`split`: split_of's), and out of the lines hash; whether it was. (A line has no
-- dependents.)
local function unpost_line(prefix, split, seq)
  local line = redis.call('HGET', lines_key(prefix), seq)
  if not line then return false end
  for _, bucket in ipairs(line_keys_of(line, prefix, split)) do remove_posting(bucket, seq) end
  redis.call('HDEL', lines_key(prefix), seq)
  return true
end

-- A band article's postings out of its buckets, unless the expiry sweep's front takes it
-- out (`left`): then they stay until the sweep's walk cuts them (compact.lua), and searches
-- pass over them, as numbers below the front. Either way its buckets go to the log of calls.
-- Its dependents move to `successor` (the same article under a new number, posted under
-- every band), or else are posted under the bands they skipped: those they share with it.
-- (A dependent taken out since, or renewed, no longer holds its number in the ids hash and
-- its record: it is passed over.) `K`: as in unindex; `shape`: layout_of's.
local function unpost_bands(K, prefix, shape, record, seq, successor, left)
  if unpost_line(prefix, shape.split, seq) then return end
  if not rec_has_fingerprint(record) then return end
  local mine = band_keys_of(shape, rec_sketch(record), prefix)
  for b, bucket in ipairs(mine) do
    if not left then remove_posting(bucket, seq) end
    touched[#touched + 1] = bucket_id(bucket, b - 1)
  end
  local key = dependents_key(prefix, seq)
  local dependents = redis.call('GET', key)
  if not dependents then return end
  redis.call('DEL', key)
  if successor then
    redis.call('APPEND', dependents_key(prefix, successor), dependents)
    return
  end
  for at = 1, #dependents, NUMBER do
    local number = string.sub(dependents, at, at + NUMBER - 1)
    local id = redis.call('HGET', ids_key(K, number), number)
    local held = id and redis.call('HGET', K[1], id)
    if held and rec_seq(held) == number then
      local sketch, theirs = rec_sketch(held), rec_sketch(record)
      for b, bucket in ipairs(mine) do
        if band_bins(shape, sketch, b - 1) == band_bins(shape, theirs, b - 1) then
          post_one(bucket, number)
        end
      end
    end
  end
end

-- Take the article whose record is `record` out of its buckets, the ring and the ids hash
-- (its record and its exact text stay). `K`: the scripts' KEYS, which start with docs,
-- exact, ids, meta, recent. With `cutoff_s` (it has expired), every older entry of its
-- table buckets goes with it (band buckets keep theirs: each may have dependents to post).
-- `successor`: the article's new number, when it is renewed (bands); `left`: the sweep's
-- front takes it out, and leaves its band postings (unpost_bands).
local function unindex(K, prefix, record, cutoff_s, successor, left)
  local meta, recent = K[4], K[5]
  local seq = rec_seq(record)
  if seq == NO_NUMBER then return end
  local shape, spec, groups = layout_of(meta)
  if shape then
    unpost_bands(K, prefix, shape, record, seq, successor, left)
    redis.call('HDEL', ids_key(K, seq), seq)
    return
  end
  local line = unpost_line(prefix, split_of(groups), seq)
  local offset = recent_offset(unpack_number(seq))
  if redis.call('GETRANGE', recent, offset + ENTRY_SEQ, offset + ENTRY_SEQ + NUMBER - 1) == seq then
    -- Its number stays, so that a caller can still tell whose slot it is (since.lua); its
    -- fingerprint and seen time are zeroed, which marks it removed.
    redis.call('SETRANGE', recent, offset, ZERO8 .. seq .. ZERO4)
  end
  for _, bucket in ipairs(line and {} or bucket_keys_of(spec, rec_fingerprint(record), prefix)) do
    if cutoff_s then
      local blob = redis.call('GET', bucket)
      if blob then cut_expired(bucket, blob, cutoff_s) end
    else
      remove_entry(bucket, seq, ENTRY, ENTRY_SEQ)
    end
  end
  redis.call('HDEL', ids_key(K, seq), seq)
end

-- Remove article `id` (whose record is `record`) from every structure of the index (`left`:
-- as unindex's).
local function remove_article(K, prefix, id, record, cutoff_s, left)
  local docs = K[1]
  unindex(K, prefix, record, cutoff_s, nil, left)
  local content = rec_content(record)
  local first = exact_key(K, content)
  if redis.call('HGET', first, content) == id then redis.call('HDEL', first, content) end
  redis.call('HDEL', docs, id)
end
