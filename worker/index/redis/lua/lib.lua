-- Shared by every script (loaded first): the storage format, the index's epoch, the guard
-- of writing calls and what deletions leave behind. postings.lua follows it.
--
-- The storage format, as worker/index/redis/format.py describes it (a test holds the two
-- together). Offsets here are 1-based positions in a record, and 0-based offsets from an
-- entry's first byte.
-- A sequence number: NUMBER bytes, big-endian (2^48 numbers: they do not run out); NO_NUMBER
-- in a record: in no bucket.
local NUMBER = 6
local NO_NUMBER = string.rep('\0', NUMBER)
local LAST_NUMBER = 2 ^ (8 * NUMBER) - 1
local function pack_number(n) return struct.pack('>I6', n) end
local function unpack_number(blob, at) return (struct.unpack('>I6', blob, at or 1)) end
local ENTRY = 18  -- a bucket entry: fingerprint (8) | seq (6) | indexed (or renewed), unix s (4)
local ENTRY_SEQ, ENTRY_SEEN = 8, 14
-- The ring of recent inserts: seq s in slot (s - 1) % RECENT_SLOTS; a removed article's entry
-- keeps its number there, with its fingerprint and seen time zeroed.
local RECENT_SLOTS = 65536
local RING_CHECK = 14  -- what identifies a ring slot's entry: its fingerprint and number
local SKETCH = 64  -- bytes of a set sketch: 64 bins of 8 bits
-- A record's fixed part, then its ids; then, with FLAG_MATCH, the match's fingerprint (MATCH).
local MATCH = 8
local REC = {content = 1, fingerprint = 17, kind = 25, flags = 26, distance = 27,
             agreeing = 28, seen_ms = 29, seq = 37, alive_s = 43, position = 47,
             sketch = 59, duplicate_of_length = 59 + SKETCH, ids = 61 + SKETCH}
local NO_POSITION = string.rep('\255', 12)  -- decided outside a stream
local FLAG_FINGERPRINT, FLAG_MATCH = 1, 2
local NO_DISTANCE = 255  -- a match's distance when a side has no fingerprint (a short line)
-- A short line's match keeps in `agreeing` this plus the lines' similarity in hundredths
-- (worker/text/lines.py, line_similarity): above any count of sketch bins.
local LINE_SIMILARITY = 100
local KINDS = {[0] = 'unique', [1] = 'exact', [2] = 'near', [3] = 'related'}
local CODES = {unique = 0, exact = 1, near = 2, related = 3}
local ZERO4, ZERO8, ZERO_SKETCH = string.rep('\0', 4), string.rep('\0', 8), string.rep('\0', SKETCH)

local function rec_content(record) return string.sub(record, REC.content, REC.content + 15) end
local function rec_fingerprint(record)
  return string.sub(record, REC.fingerprint, REC.fingerprint + 7)
end
local function rec_seq(record) return string.sub(record, REC.seq, REC.seq + NUMBER - 1) end
local function rec_seen_ms(record)
  return (struct.unpack('>d', string.sub(record, REC.seen_ms, REC.seen_ms + 7)))
end
local function rec_alive_s(record) return (struct.unpack('>I4', record, REC.alive_s)) end
local function rec_position(record) return string.sub(record, REC.position, REC.position + 11) end
local function rec_sketch(record) return string.sub(record, REC.sketch, REC.sketch + SKETCH - 1) end
local function rec_has_fingerprint(record)
  return bit.band(string.byte(record, REC.flags), FLAG_FINGERPRINT) ~= 0
end
local function rec_has_match(record)
  return bit.band(string.byte(record, REC.flags), FLAG_MATCH) ~= 0
end
local function rec_ids(record)
  local length = struct.unpack('>I2', record, REC.duplicate_of_length)
  local last = rec_has_match(record) and -MATCH - 1 or -1
  return string.sub(record, REC.ids, REC.ids + length - 1),
         string.sub(record, REC.ids + length, last)
end

-- A record from its fields (`seq` NUMBER bytes, fingerprints 8 bytes or nil, `position` 12 bytes,
-- `sketch` or nil).
local function make_record(content, fp, kind, dist, agreeing, match_fp, seen_ms, seq, alive_s,
                           position, sketch, duplicate_of, original)
  local flags = 0
  if fp then flags = flags + FLAG_FINGERPRINT end
  if match_fp then flags = flags + FLAG_MATCH end
  return content .. (fp or ZERO8) .. string.char(CODES[kind], flags, dist, agreeing)
    .. struct.pack('>d', seen_ms) .. seq .. struct.pack('>I4', alive_s) .. position
    .. (sketch or ZERO_SKETCH) .. struct.pack('>I2', #duplicate_of) .. duplicate_of .. original
    .. (match_fp or '')
end

-- The ids by number, and the first article of each text, are spread over small hashes (a few
-- dozen fields each, which Redis keeps compact, rather than one hash of millions). KEYS[3]
-- and KEYS[2] of every script start their keys (worker/index/redis/keys.py); the meta record
-- (KEYS[4]) holds `exact_groups`, fixed when the namespace was made.
-- Number `seq`'s: its number with the low 6 bits cleared (IDS_PER_HASH numbers a hash).
local IDS_PER_HASH = 64
local function ids_key(K, seq)
  return K[3] .. string.sub(seq, 1, NUMBER - 1)
    .. string.char(bit.band(string.byte(seq, NUMBER), 192))
end
-- Content hash `content`'s: its first `exact_groups` bits (3 bytes).
local exact_groups
local function exact_key(K, content)
  exact_groups = exact_groups or tonumber(redis.call('HGET', K[4], 'exact_groups'))
  local g = math.floor(struct.unpack('>I4', content) / 2 ^ (32 - exact_groups))
  return K[2] .. string.char(math.floor(g / 65536), math.floor(g / 256) % 256, g % 256)
end

-- The ids of numbers `seqs` (nil: none), one HMGET per small hash.
local function ids_of(K, seqs)
  local by_key, order = {}, {}
  for i, seq in ipairs(seqs) do
    local key = ids_key(K, seq)
    local held = by_key[key]
    if not held then
      held = {}
      by_key[key], order[#order + 1] = held, key
    end
    held[#held + 1] = i
  end
  local ids = {}
  for _, key in ipairs(order) do
    local fields = {}
    for k, i in ipairs(by_key[key]) do fields[k] = seqs[i] end
    for k, id in ipairs(redis.call('HMGET', key, unpack(fields))) do
      ids[by_key[key][k]] = id or nil
    end
  end
  return ids
end

-- The reply for an article from its record (check_and_insert.lua's header).
local function reply_from(record, replayed, candidates, hot, replaced)
  local kind, flags, dist, agreeing = string.byte(record, REC.kind, REC.agreeing)
  local match_fp = ''
  if bit.band(flags, FLAG_MATCH) ~= 0 then match_fp = string.sub(record, -MATCH) end
  if kind == 0 or dist == NO_DISTANCE then dist = -1 end
  local duplicate_of, original = rec_ids(record)
  return {KINDS[kind], dist, duplicate_of, match_fp, rec_seen_ms(record), replayed, candidates,
          hot, replaced, agreeing, original, unpack_number(rec_seq(record))}
end

-- Nil when the index is the one the caller read (`epoch`, from its meta record), else the
-- error the caller recovers from: the index was emptied (a flush, a restart without its data,
-- a failover to an empty replica) or built again since, and nothing the caller holds about it
-- is true any more. Every script checks it before it reads or writes anything.
local function changed_index(meta, epoch)
  if redis.call('HGET', meta, 'epoch') ~= epoch then
    return redis.error_reply('DEDUP_RESET the index was emptied or built again since the '
      .. 'worker read it')
  end
end

local function entry_seq(blob, at)
  return string.sub(blob, at + ENTRY_SEQ, at + ENTRY_SEQ + NUMBER - 1)
end
local function entry_seen_s(blob, at) return (struct.unpack('>I4', blob, at + ENTRY_SEEN)) end

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

-- Whether the ring's slot of number `number` still holds `entry` (the first RING_CHECK bytes
-- of the entry a caller saw there): the same number, and the same fingerprint unless the
-- article was removed since. Another entry there means that the index lost writes the caller
-- had seen (a lagging replica promoted, a restart that lost its last writes), and what was
-- written since reuses their numbers.
local function ring_holds(ring_key, number, entry)
  local at = recent_offset(number)
  local held = redis.call('GETRANGE', ring_key, at, at + RING_CHECK - 1)
  local fp = string.sub(held, 1, 8)
  return string.sub(held, 9) == string.sub(entry, 9)
    and (fp == string.sub(entry, 1, 8) or fp == ZERO8)
end

-- What a message at `position` (12 bytes) did to article `id` is kept under this key for a
-- while: the record of the article it decided, once a later message deleted or replaced it,
-- or the answer of a deletion. One key per message, so that a redelivery of any of an id's
-- messages gets its own first answer, however often the id changed since.
local function gone_key(gone_prefix, position, id)
  return gone_prefix .. string.gsub(position, '.', function(c)
    return string.format('%02x', string.byte(c))
  end) .. ':' .. id
end

-- Keep the record of an article deleted or replaced by a later message, for `window` seconds:
-- a redelivery of the message that decided it (the same position in the input topic) gets
-- that verdict again (check_and_insert.lua, replay_or_replace).
local function keep_gone(gone_prefix, window, id, record)
  if window > 0 and rec_position(record) ~= NO_POSITION then
    redis.call('SET', gone_key(gone_prefix, rec_position(record), id), record, 'EX', window)
  end
end

-- A deletion's answer as kept (forget.lua): 'D' and 1 or 0, whether the id was indexed; told
-- from a kept record by its length.
local DELETED = 'D'
local function is_deletion(kept) return #kept == #DELETED + 1 end

-- Whether position `a` comes after position `b` in the same input partition (both 12 bytes:
-- the partition, then the offset, big-endian).
local function later_in_partition(a, b)
  return a ~= NO_POSITION and b ~= NO_POSITION and string.sub(a, 1, 4) == string.sub(b, 1, 4)
    and a > b
end

-- The guard a writing call comes with (one argument, packed by worker/index/redis/guard.py;
-- "" for none): the chain of calls it belongs to, and the claims of the input partitions whose
-- messages it decides. A chain is a worker's calls sent one after another without waiting for
-- the replies: call n of a chain runs only after call n - 1 of it did, so that a call that
-- failed (refused, or lost) stops every later one of its chain rather than letting them
-- overtake it. A claim is a consumer group generation: a call of an older generation than the
-- one that last claimed the partition comes from a worker that no longer owns it, and writes
-- nothing. Claims lapse after OWNER_S seconds without a call (a group deleted and made again
-- starts its generations from 1); chains after CHAIN_S.
local OWNER_S, CHAIN_S = 600, 86400

local function parse_guard(blob)
  if blob == '' then return nil end
  local function text(at)
    local length = struct.unpack('>I2', blob, at)
    return string.sub(blob, at + 2, at + 1 + length), at + 2 + length
  end
  local guard, at = {claims = {}}, 1
  guard.chain, at = text(at)
  guard.number, at = struct.unpack('>d', blob, at)
  while at <= #blob do
    local key, generation
    key, at = text(at)
    generation, at = struct.unpack('>d', blob, at)
    guard.claims[#guard.claims + 1] = {key = key, generation = generation}
  end
  return guard
end

-- Nil when the call may write, else the error reply it gets instead.
local function guard_refuses(guard)
  if not guard then return nil end
  for _, claim in ipairs(guard.claims) do
    local held = tonumber(redis.call('GET', claim.key) or '-1')
    if held > claim.generation then
      return redis.error_reply('DEDUP_FENCED ' .. claim.key .. ' was claimed by generation '
        .. held .. ', this call comes from generation ' .. claim.generation)
    end
  end
  if guard.chain ~= '' then
    local last = tonumber(redis.call('GET', guard.chain) or '0')
    if guard.number ~= last + 1 then
      return redis.error_reply('DEDUP_ORDER call ' .. guard.number .. ' of its chain, after '
        .. last .. ': an earlier call of the worker did not run')
    end
  end
end

-- The guard of a writing call (parsed), or the error reply it gets instead: the index is not
-- the one the caller read (changed_index), or the guard refuses the call (guard_refuses).
local function admit(meta, epoch, guard_blob)
  local changed = changed_index(meta, epoch)
  if changed then return nil, changed end
  local guard = parse_guard(guard_blob)
  return guard, guard_refuses(guard)
end

-- The call ran: its claims are (still) the partitions', and the next call of its chain may run.
local function guard_passed(guard)
  if not guard then return end
  for _, claim in ipairs(guard.claims) do
    redis.call('SET', claim.key, string.format('%d', claim.generation), 'EX', OWNER_S)
  end
  if guard.chain ~= '' then
    redis.call('SET', guard.chain, string.format('%d', guard.number), 'EX', CHAIN_S)
  end
end
