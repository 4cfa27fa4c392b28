//! The worker's copy of the index's buckets, and the search for each fingerprint's nearest
//! entries in the buckets it probes: what worker/index/redis/bucket_cache.py (BucketCache.read)
//! then nearest.py (nearest) compute, entry for entry, without a Python object per bucket.
//!
//! Entries are format.ENTRY: fingerprint (8 bytes), sequence number (4), first-seen second (4),
//! big-endian. Each bucket keeps its entries in first-seen order, as Redis does.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

const ENTRY_BYTES: usize = 16;

#[derive(Clone, Copy)]
struct Entry {
    fingerprint: u64,
    seq: u32,
    seen_s: u32,
}

impl Entry {
    fn parse(raw: &[u8]) -> Entry {
        Entry {
            fingerprint: u64::from_be_bytes(raw[0..8].try_into().unwrap()),
            seq: u32::from_be_bytes(raw[8..12].try_into().unwrap()),
            seen_s: u32::from_be_bytes(raw[12..16].try_into().unwrap()),
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.fingerprint.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.seen_s.to_be_bytes());
    }

    fn expired(&self, cutoff_s: Option<i64>) -> bool {
        cutoff_s.is_some_and(|cutoff| i64::from(self.seen_s) < cutoff)
    }
}

#[pyclass]
pub struct Buckets {
    buckets: Vec<Vec<Entry>>,
    entries: usize,
}

fn slots_of(raw: &[u8]) -> PyResult<Vec<usize>> {
    if raw.len() & 7 != 0 {
        return Err(PyValueError::new_err("slots are 8-byte integers"));
    }
    Ok(raw
        .chunks_exact(8)
        .map(|b| i64::from_ne_bytes(b.try_into().unwrap()) as usize)
        .collect())
}

#[pymethods]
impl Buckets {
    #[new]
    fn new(count: usize) -> Self {
        Buckets {
            buckets: vec![Vec::new(); count],
            entries: 0,
        }
    }

    /// Entries held, in every bucket.
    #[getter]
    fn entries(&self) -> usize {
        self.entries
    }

    fn clear(&mut self) {
        self.buckets.iter_mut().for_each(Vec::clear);
        self.entries = 0;
    }

    /// Append `entries` (in first-seen order) to their buckets: `slots` (8-byte integers)
    /// holds each entry's bucket in one table, then each one's in the next table, and so on.
    fn add(&mut self, entries: &[u8], slots: &[u8]) -> PyResult<()> {
        if entries.len() & (ENTRY_BYTES - 1) != 0 {
            return Err(PyValueError::new_err("entries are 16 bytes each"));
        }
        let parsed: Vec<Entry> = entries
            .chunks_exact(ENTRY_BYTES)
            .map(Entry::parse)
            .collect();
        let slots = slots_of(slots)?;
        if parsed.is_empty() {
            return Ok(());
        }
        if slots.len() % parsed.len() != 0 {
            return Err(PyValueError::new_err("one slot per entry and table"));
        }
        self.check(&slots)?;
        for table in slots.chunks_exact(parsed.len()) {
            for (entry, &slot) in parsed.iter().zip(table) {
                self.buckets[slot].push(*entry);
            }
        }
        self.entries += slots.len();
        Ok(())
    }

    /// The bucket's entries, as Redis holds the bucket (None: empty).
    fn bucket<'py>(&self, py: Python<'py>, slot: usize) -> Option<Bound<'py, PyBytes>> {
        let bucket = self.buckets.get(slot).filter(|b| !b.is_empty())?;
        let mut out = Vec::with_capacity(bucket.len() * ENTRY_BYTES);
        bucket.iter().for_each(|e| e.write(&mut out));
        Some(PyBytes::new(py, &out))
    }

    /// For each fingerprint, whose probed buckets are its row of `slots` (`per` each): the
    /// `limit` entries nearest to it within `radius` bits, nearest first (between equals the
    /// first seen), each once, of the newest `max_read` of each bucket, those first seen before
    /// `cutoff_s` left out; as (entries, candidates compared, buckets over `max_read`, places
    /// among the probes of buckets led by expired entries). Those expired entries are then cut
    /// from the copy.
    #[allow(clippy::too_many_arguments)]
    fn nearest<'py>(
        &mut self,
        py: Python<'py>,
        fingerprints: Vec<u64>,
        slots: &[u8],
        per: usize,
        radius: u32,
        limit: usize,
        max_read: usize,
        cutoff_s: Option<i64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let slots = slots_of(slots)?;
        if slots.len() != fingerprints.len() * per {
            return Err(PyValueError::new_err("`per` slots per fingerprint"));
        }
        self.check(&slots)?;
        let out = PyList::empty(py);
        let mut cut: Vec<usize> = Vec::new();
        let mut near: Vec<(u32, u32, Entry)> = Vec::new();
        let mut taken: Vec<u32> = Vec::with_capacity(limit);
        let mut found: Vec<u8> = Vec::new();
        let mut probed: Vec<&[Entry]> = Vec::with_capacity(per);
        for (&fingerprint, row) in fingerprints.iter().zip(slots.chunks_exact(per.max(1))) {
            near.clear();
            let (mut candidates, mut hot) = (0usize, 0usize);
            let mut expired: Vec<usize> = Vec::new();
            // The buckets are all over memory: ask for all of the row's at once, so that the
            // processor fetches them side by side rather than one after another.
            probed.clear();
            for &slot in row {
                let bucket = self.buckets[slot].as_slice();
                prefetch(bucket);
                probed.push(bucket);
            }
            for (place, (&bucket, &slot)) in probed.iter().zip(row).enumerate() {
                let Some(first) = bucket.first() else {
                    continue;
                };
                if first.expired(cutoff_s) {
                    expired.push(place);
                    cut.push(slot);
                }
                let newest = if bucket.len() > max_read {
                    hot += 1;
                    &bucket[bucket.len() - max_read..]
                } else {
                    bucket
                };
                for entry in newest {
                    if entry.expired(cutoff_s) {
                        continue;
                    }
                    candidates += 1;
                    let distance = (entry.fingerprint ^ fingerprint).count_ones();
                    if distance <= radius {
                        near.push((distance, entry.seq, *entry));
                    }
                }
            }
            near.sort_by_key(|&(distance, seq, _)| (distance, seq)); // stable, as numpy's lexsort
            taken.clear();
            found.clear();
            for &(_, seq, entry) in &near {
                if taken.len() == limit {
                    break;
                }
                if !taken.contains(&seq) {
                    taken.push(seq);
                    entry.write(&mut found);
                }
            }
            let places = PyTuple::new(py, &expired)?;
            out.append((PyBytes::new(py, &found), candidates, hot, places))?;
        }
        drop(probed);
        if let Some(cutoff) = cutoff_s {
            for slot in cut {
                let bucket = &mut self.buckets[slot];
                let old = bucket
                    .iter()
                    .take_while(|e| i64::from(e.seen_s) < cutoff)
                    .count();
                bucket.drain(..old);
                self.entries -= old;
            }
        }
        Ok(out)
    }
}

fn prefetch(entries: &[Entry]) {
    #[cfg(target_arch = "x86_64")]
    if !entries.is_empty() {
        // SAFETY: a prefetch only hints at an address, and this one is in a live slice.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(entries.as_ptr().cast());
        }
    }
}

impl Buckets {
    fn check(&self, slots: &[usize]) -> PyResult<()> {
        match slots.iter().max() {
            Some(&top) if top >= self.buckets.len() => {
                Err(PyValueError::new_err(format!("no bucket {top}")))
            }
            _ => Ok(()),
        }
    }
}
