-- What a worker reads of a band index before it guesses a batch's decisions
-- (worker/index/redis/band_reads.py): in a few calls rather than a command per key. Reads
-- only. ARGV[1] names the read:
--   'state'  KEYS: docs, exact, ids, meta, recent, then the count of calls, the log of
--            calls and the sequence counter (lua/guesses.lua); ARGV[2..]: content hashes.
--            Reply: {calls, the log's head (HEAD bytes), Redis's clock (unix s), the
--            counter, the expiry sweep's front (expire.lua), then the id of the first
--            article with each content hash ("" for none)}
--   'tails'  KEYS: buckets' own strings; ARGV[2]: bytes. Reply: each one's last bytes
--   'owners' KEYS: docs, exact, ids, meta, recent; ARGV[2..]: sequence numbers (NUMBER
--            bytes). Reply: each number's id ("" for none)
local HEAD = 25
local read = ARGV[1]

if read == 'state' then
  local head = redis.call('LINDEX', KEYS[7], 0) or ''
  local out = {redis.call('GET', KEYS[6]) or '0', string.sub(head, 1, HEAD),
               redis.call('TIME')[1], redis.call('GET', KEYS[8]) or '0',
               redis.call('HGET', KEYS[4], 'front') or '1'}
  -- (no layout record yet: nothing was indexed)
  local indexed = redis.call('HEXISTS', KEYS[4], 'exact_groups') == 1
  for i = 2, #ARGV do
    local content = ARGV[i]
    out[#out + 1] = indexed and redis.call('HGET', exact_key(KEYS, content), content) or ''
  end
  return out
end

if read == 'tails' then
  local out, size = {}, tonumber(ARGV[2])
  for i, key in ipairs(KEYS) do out[i] = redis.call('GETRANGE', key, -size, -1) end
  return out
end

if read == 'owners' then
  local seqs = {}
  for i = 2, #ARGV do seqs[i - 1] = ARGV[i] end
  local ids, out = ids_of(KEYS, seqs), {}
  for i = 1, #seqs do out[i] = ids[i] or '' end
  return out
end

return redis.error_reply('reads.lua: no read ' .. tostring(read))
