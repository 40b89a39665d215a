//! An intrusive, fixed-capacity LRU set over dense keys `0..n` (logical pages,
//! map chunks, translation pages): two `u32` links per key, O(1) touch, insert
//! and evict, no hashing (deterministic and fast). Used by the DFTL cached
//! mapping table, the two-level FTL's chunk cache and the host hint cache.

const NIL: u32 = u32::MAX;
/// `prev` value of a key that is not in the set.
const ABSENT: u32 = u32::MAX - 1;

pub struct Lru {
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Most recently used.
    head: u32,
    /// Least recently used.
    tail: u32,
    len: u64,
    cap: u64,
}

impl Lru {
    /// An empty set over keys `0..n` holding at most `cap` keys (`cap` >= 1).
    pub fn new(n: u64, cap: u64) -> Lru {
        Lru {
            prev: crate::mem::big_vec_u32(n as usize, ABSENT),
            next: crate::mem::big_vec_u32(n as usize, NIL),
            head: NIL,
            tail: NIL,
            len: 0,
            cap: cap.max(1),
        }
    }

    pub fn capacity(&self) -> u64 {
        self.cap
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn contains(&self, k: u32) -> bool {
        self.prev[k as usize] != ABSENT
    }

    #[inline]
    fn unlink(&mut self, k: u32) {
        let (p, n) = (self.prev[k as usize], self.next[k as usize]);
        if p == NIL {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    #[inline]
    fn push_front(&mut self, k: u32) {
        self.prev[k as usize] = NIL;
        self.next[k as usize] = self.head;
        if self.head != NIL {
            self.prev[self.head as usize] = k;
        } else {
            self.tail = k;
        }
        self.head = k;
    }

    /// Mark `k` most recently used if present; returns whether it was.
    #[inline]
    pub fn touch(&mut self, k: u32) -> bool {
        if !self.contains(k) {
            return false;
        }
        if self.head != k {
            self.unlink(k);
            self.push_front(k);
        }
        true
    }

    /// Insert `k` (or touch it); returns the key evicted to make room, if any.
    #[inline]
    pub fn insert(&mut self, k: u32) -> Option<u32> {
        if self.touch(k) {
            return None;
        }
        let mut evicted = None;
        if self.len >= self.cap {
            let t = self.tail;
            self.unlink(t);
            self.prev[t as usize] = ABSENT;
            self.next[t as usize] = NIL;
            self.len -= 1;
            evicted = Some(t);
        }
        self.push_front(k);
        self.len += 1;
        evicted
    }

    /// Remove `k` if present.
    pub fn remove(&mut self, k: u32) {
        if self.contains(k) {
            self.unlink(k);
            self.prev[k as usize] = ABSENT;
            self.next[k as usize] = NIL;
            self.len -= 1;
        }
    }

    pub fn memory_bytes(&self) -> usize {
        (self.prev.capacity() + self.next.capacity()) * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used() {
        let mut l = Lru::new(10, 3);
        assert_eq!(l.insert(1), None);
        assert_eq!(l.insert(2), None);
        assert_eq!(l.insert(3), None);
        assert!(l.touch(1));
        assert_eq!(l.insert(4), Some(2));
        assert_eq!(l.insert(5), Some(3));
        assert!(l.contains(1) && l.contains(4) && l.contains(5));
        l.remove(4);
        assert_eq!(l.len(), 2);
        assert_eq!(l.insert(6), None);
        assert_eq!(l.insert(7), Some(1));
    }
}
