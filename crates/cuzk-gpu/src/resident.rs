//! What a [`GpuBackend`](crate::GpuBackend) keeps in device memory between calls: several
//! proving keys and circuits at once, the least recently used freed first when a call needs
//! room. One key per GPU made a WinningPoSt between 32 GiB PoRep partitions evict the 47 GB
//! PoRep key and its PCE, and the next partition paid 16 s to upload them again.

/// Entries of one kind (keys, circuits), each stamped with the call that last used it.
#[derive(Debug)]
pub(crate) struct Lru<T> {
    slots: Vec<(u64, T)>,
}

impl<T> Default for Lru<T> {
    fn default() -> Self {
        Lru { slots: Vec::new() }
    }
}

impl<T> Lru<T> {
    /// Stamps the entry `is` picks as used by call `now`; false when there is none.
    pub fn touch(&mut self, now: u64, is: impl Fn(&T) -> bool) -> bool {
        match self.slots.iter_mut().find(|(_, t)| is(t)) {
            Some(slot) => {
                slot.0 = now;
                true
            }
            None => false,
        }
    }

    /// The entry `is` picks, or a new one from `make`, stamped as used by call `now`.
    pub fn get_or_try_insert<E>(
        &mut self,
        now: u64,
        is: impl Fn(&T) -> bool,
        make: impl FnOnce() -> Result<T, E>,
    ) -> Result<&mut T, E> {
        let i = match self.slots.iter().position(|(_, t)| is(t)) {
            Some(i) => i,
            None => {
                self.slots.push((now, make()?));
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[i];
        slot.0 = now;
        Ok(&mut slot.1)
    }

    /// Drops the entries `keep` rejects.
    pub fn retain(&mut self, keep: impl Fn(&T) -> bool) {
        self.slots.retain(|(_, t)| keep(t));
    }

    /// The entries call `now` has not used.
    pub fn idle_mut(&mut self, now: u64) -> impl Iterator<Item = &mut T> {
        (self.slots.iter_mut())
            .filter(move |(used, _)| *used < now)
            .map(|(_, t)| t)
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// The stamp and position of the least recently used entry that call `now` has not used.
    fn oldest(&self, now: u64) -> Option<(u64, usize)> {
        (self.slots.iter().enumerate())
            .filter(|(_, (used, _))| *used < now)
            .map(|(i, (used, _))| (*used, i))
            .min()
    }
}

/// Frees entries of `keys` and `circuits` that call `now` has not used, least recently used
/// first, until `free()` reports `need` bytes (or nothing is left to free: the call then
/// fails on its own allocation, as it would with nothing else resident). Returns how many
/// were freed. `free` is asked only while something could be freed, so a lone key costs no
/// device synchronisation.
pub(crate) fn make_room<A, B, E>(
    keys: &mut Lru<A>,
    circuits: &mut Lru<B>,
    now: u64,
    need: u64,
    mut free: impl FnMut() -> Result<u64, E>,
) -> Result<usize, E> {
    let mut freed = 0;
    loop {
        let victim = match (keys.oldest(now), circuits.oldest(now)) {
            (None, None) => return Ok(freed),
            (Some(k), Some(c)) if c < k => (false, c.1),
            (Some(k), _) => (true, k.1),
            (None, Some(c)) => (false, c.1),
        };
        if free()? >= need {
            return Ok(freed);
        }
        match victim {
            (true, i) => drop(keys.slots.remove(i)),
            (false, i) => drop(circuits.slots.remove(i)),
        }
        freed += 1;
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::convert::Infallible;
    use std::rc::Rc;

    use proptest::prelude::*;

    use super::*;

    /// Device memory in a test: blocks give their bytes back when dropped.
    #[derive(Debug)]
    struct Block {
        name: u8,
        bytes: u64,
        used: Rc<Cell<u64>>,
    }

    impl Drop for Block {
        fn drop(&mut self) {
            self.used.set(self.used.get() - self.bytes);
        }
    }

    proptest! {
        /// Whatever the history of calls (each uses one key or one circuit), room is made by
        /// freeing the least recently used entries the call did not use, no more than needed.
        #[test]
        fn room_is_made_from_the_least_recently_used(
            calls in prop::collection::vec((0u8..6, any::<bool>(), 1u64..40, 0u64..120), 1..40),
        ) {
            const TOTAL: u64 = 100;
            let used = Rc::new(Cell::new(0));
            let (mut keys, mut circuits) = (Lru::<Block>::default(), Lru::<Block>::default());
            // Model: each live entry's last use and size.
            let mut live = std::collections::BTreeMap::<(bool, u8), (u64, u64)>::new();
            for (now, &(name, is_key, bytes, need)) in calls.iter().enumerate() {
                let now = now as u64 + 1;
                let lru = if is_key { &mut keys } else { &mut circuits };
                if lru.touch(now, |b| b.name == name) {
                    live.get_mut(&(is_key, name)).unwrap().0 = now;
                }
                let mut others: Vec<_> = (live.iter())
                    .filter(|(_, &(t, _))| t < now)
                    .map(|(&k, &(t, b))| (t, b, k))
                    .collect();
                others.sort();
                let (mut held, mut want) = (used.get(), 0);
                while want < others.len() && TOTAL.saturating_sub(held) < need {
                    held -= others[want].1;
                    want += 1;
                }
                let freed = make_room(&mut keys, &mut circuits, now, need, || {
                    Ok::<_, Infallible>(TOTAL.saturating_sub(used.get()))
                })
                .unwrap();
                prop_assert_eq!(freed, want);
                prop_assert_eq!(used.get(), held);
                for (_, _, k) in &others[..want] {
                    live.remove(k);
                }
                prop_assert_eq!(keys.len() + circuits.len(), live.len());
                for &(is_key, name) in live.keys() {
                    let lru = if is_key { &keys } else { &circuits };
                    prop_assert!(lru.slots.iter().any(|(_, b)| b.name == name));
                }
                // The call's own entry, uploaded if missing.
                let lru = if is_key { &mut keys } else { &mut circuits };
                let b = lru.get_or_try_insert(now, |b| b.name == name, || {
                    used.set(used.get() + bytes);
                    live.insert((is_key, name), (now, bytes));
                    Ok::<_, Infallible>(Block { name, bytes, used: used.clone() })
                });
                prop_assert_eq!(b.unwrap().name, name);
            }
        }
    }

    #[test]
    fn a_lone_entry_costs_no_free_memory_query() {
        let (mut keys, mut circuits) = (Lru::<u8>::default(), Lru::<u8>::default());
        keys.slots.push((1, 7));
        circuits.slots.push((1, 8));
        let asked = make_room(&mut keys, &mut circuits, 1, u64::MAX, || {
            Err::<u64, _>("asked")
        });
        assert_eq!(asked, Ok(0));
        // A second call under another key: the first one is asked about, then freed.
        assert!(!keys.touch(2, |&k| k == 9));
        assert_eq!(
            make_room(&mut keys, &mut circuits, 2, 10, || Ok::<_, ()>(0)),
            Ok(2)
        );
        assert_eq!(keys.len() + circuits.len(), 0);
    }
}
