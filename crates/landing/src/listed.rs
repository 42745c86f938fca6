//! Lists of what a signal must set right before the process exits: the
//! temporaries to delete ([`crate::temporaries`]) and the shared outputs
//! whose reserved blocks to release ([`crate::reserve`]). A signal runs no
//! destructor, so each such thing is listed while it lives, and
//! [`crate::cleanup`]'s signal thread walks the lists.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Things alive now, each under the id of the [`Entry`] that lists it.
#[derive(Debug)]
pub(crate) struct Listed<T: 'static> {
    items: Mutex<Vec<(u64, T)>>,
    next: AtomicU64,
}

/// A thing's place on a [`Listed`]; dropping it takes the thing off.
#[derive(Debug)]
pub(crate) struct Entry<T: 'static> {
    list: &'static Listed<T>,
    id: u64,
}

impl<T> Listed<T> {
    /// An empty list, for a `static`.
    pub(crate) const fn new() -> Listed<T> {
        Listed {
            items: Mutex::new(Vec::new()),
            next: AtomicU64::new(0),
        }
    }

    /// Lists `item` until the returned entry is dropped.
    pub(crate) fn add(&'static self, item: T) -> Entry<T> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.hold().push((id, item));
        Entry { list: self, id }
    }

    /// Does `act` to every thing listed, for a process about to exit on a
    /// signal, and returns the list still locked: held until exit, nothing
    /// is listed or taken off in between.
    pub(crate) fn act_on_all(
        &'static self,
        act: impl Fn(&T),
    ) -> MutexGuard<'static, Vec<(u64, T)>> {
        let items = self.hold();
        for (_, item) in items.iter() {
            act(item);
        }
        items
    }

    /// The list, locked: nothing is listed or taken off while the guard
    /// lives. A panic while it was held leaves it usable (it is only
    /// ever pushed to and removed from whole).
    pub(crate) fn hold(&self) -> MutexGuard<'_, Vec<(u64, T)>> {
        self.items.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<T> Drop for Entry<T> {
    fn drop(&mut self) {
        let mut items = self.list.hold();
        if let Some(i) = items.iter().position(|(id, _)| *id == self.id) {
            items.swap_remove(i);
        }
    }
}
