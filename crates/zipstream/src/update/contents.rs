//! What the archive `zip` writes holds, chosen before anything is
//! written: only entries of the old archive ([`Contents::Kept`]: `-U`,
//! `-d`, `-A` or `-z` alone), or items found beside them
//! ([`Contents::New`]), less the entries `-FS` finds gone ([`gone`]); and
//! what `-FS` and `-sf` compare an archive's entries with.

use std::collections::HashSet;

use super::{Candidate, Change, Mode, Step, by_name, changes, is_newer, plan};
use crate::entry::Entry;

/// What the new archive holds.
#[derive(Debug)]
pub enum Contents<T> {
    /// Only entries of the old archive, by index.
    Kept(Vec<usize>),
    /// Items found beside the old entries, less the entries at the
    /// indexes `gone` (`-FS`: their files are gone).
    New {
        /// The items, in the order found.
        items: Vec<T>,
        /// The indexes of the old entries left out.
        gone: Vec<usize>,
    },
}

impl<T: Candidate> Contents<T> {
    /// The items that go into the archive (none when only old entries are
    /// kept).
    pub fn items(&self) -> &[T] {
        match self {
            Contents::Kept(_) => &[],
            Contents::New { items, .. } => items,
        }
    }

    /// The archive's entries in order ([`plan`]), and what each does as
    /// Info-ZIP announces it ([`changes`]; none for an entry kept as it
    /// was), over the old archive's `entries`.
    pub fn steps(&self, entries: &[Entry], mode: Mode) -> (Vec<Step<'_, T>>, Vec<Option<Change>>) {
        match self {
            Contents::Kept(kept) => (
                kept.iter().map(|&i| Step::Kept(i)).collect(),
                vec![None; kept.len()],
            ),
            Contents::New { items, gone } => {
                let steps = plan(entries, items)
                    .into_iter()
                    .filter(|s| !matches!(s, Step::Kept(i) if gone.contains(i)))
                    .collect::<Vec<_>>();
                let changes = changes(&steps, entries, mode);
                (steps, changes)
            }
        }
    }
}

/// `-FS`: the indexes of the `entries` that no item has the name of
/// (their files are gone), in order.
pub fn gone<T: Candidate>(entries: &[Entry], items: &[T]) -> Vec<usize> {
    let names: HashSet<&str> = items.iter().map(|i| i.name()).collect();
    (0..entries.len())
        .filter(|&i| !names.contains(entries[i].name.trim_end_matches('/')))
        .collect()
}

/// `-FS`: the items whose entry differs from the file, in time (in the
/// 2-second steps of a ZIP's DOS time, either way) or in size, and the
/// new ones, as Info-ZIP's file sync compares them; an existing
/// directory is left as it is.
pub fn changed_only<T: Candidate>(items: Vec<T>, entries: &[Entry]) -> Vec<T> {
    let existing = by_name(entries);
    items
        .into_iter()
        .filter(|i| match existing.get(i.name()) {
            None => true,
            Some(_) if i.is_dir() => false,
            Some(e) => {
                i.mtime().div_euclid(2) != e.mtime.div_euclid(2)
                    || i.size().is_some_and(|size| size != e.size)
            }
        })
        .collect()
}

/// How many of `items` are new to an archive of `entries` (Info-ZIP's
/// count of the files it scanned).
pub fn new_count<T: Candidate>(entries: &[Entry], items: &[T]) -> usize {
    let old = by_name(entries);
    items.iter().filter(|i| !old.contains_key(i.name())).count()
}

/// `-sf`: the items an update would read (as [`newer_only`](super::newer_only)
/// chooses them under `-u` and `-f`; every item otherwise), in order.
pub fn would_add<'a, T: Candidate>(items: &'a [T], entries: &[Entry], mode: Mode) -> Vec<&'a T> {
    if !matches!(mode, Mode::Update | Mode::Freshen) {
        return items.iter().collect();
    }
    let existing = by_name(entries);
    items
        .iter()
        .filter(|i| is_newer(*i, &existing, mode))
        .collect()
}

/// Each item the `steps` add, by name and as a listing shows it (a
/// folder with its `/`).
pub fn added_names<T: Candidate>(steps: &[Step<'_, T>]) -> Vec<(String, String)> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Item(i) => {
                let name = i.name().to_string();
                let shown = if i.is_dir() {
                    format!("{name}/")
                } else {
                    name.clone()
                };
                Some((name, shown))
            }
            Step::Kept(_) => None,
        })
        .collect()
}
