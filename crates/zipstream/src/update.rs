//! Info-ZIP's update planning: given an existing archive's entries and the
//! files offered to it, which entries are kept, replaced or deleted, which
//! files are added, in what order, and which are left out as not newer —
//! the decisions behind `zip`, `zip -u`, `zip -f` and `zip -d`, without the
//! file system or the terminal.
//!
//! The caller walks its files, describes each as a [`Candidate`], and
//! writes the [`Step`]s in order: a kept entry is copied from the old
//! archive, an item is read from its file. Nothing here reads or writes
//! files; [`Contents`] is what a run writes, `-FS` compares with
//! [`gone`] and [`changed_only`], and `-sf` shows what a run would do
//! ([`write_would_add`], [`write_would_delete`], [`write_contains`]).
//!
//! ```
//! use zipstream::update::{self, Candidate, Mode, Step};
//! # use std::path::Path;
//! # use zipstream::{EntryOptions, ZipArchive, ZipWriter};
//!
//! struct File { name: &'static str, mtime: i64 }
//! impl Candidate for File {
//!     fn name(&self) -> &str { self.name }
//!     fn path(&self) -> &Path { Path::new(self.name) }
//!     fn mtime(&self) -> i64 { self.mtime }
//!     fn is_dir(&self) -> bool { false }
//!     fn same_file(&self, _first: &Self) -> bool { false }
//! }
//!
//! # fn main() -> zipstream::Result<()> {
//! let mut old = ZipWriter::new(Vec::new());
//! old.add_bytes(EntryOptions::file("a").mtime(1_000), b"a")?;
//! old.add_bytes(EntryOptions::file("b").mtime(1_000), b"b")?;
//! let old = ZipArchive::new(std::io::Cursor::new(old.finish()?))?;
//!
//! // `zip -u`: `a` is newer and replaced in its place, `b` is not, `c` is new.
//! let offered = vec![
//!     File { name: "a", mtime: 2_000 },
//!     File { name: "b", mtime: 1_000 },
//!     File { name: "c", mtime: 0 },
//! ];
//! let items = update::newer_only(update::dedupe(offered)?, old.entries(), Mode::Update);
//! let steps = update::plan(old.entries(), &items);
//! assert!(matches!(steps[..], [Step::Item(a), Step::Kept(1), Step::Item(c)]
//!     if a.name == "a" && c.name == "c"));
//! # Ok(())
//! # }
//! ```

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::pattern::Pattern;

mod contents;
mod shown;

pub use contents::{Contents, added_names, changed_only, gone, new_count, would_add};
pub use shown::{total_size, write_contains, write_would_add, write_would_delete};

/// What `zip` does with the archive's entries (Info-ZIP's modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Add the items; entries of the same names are replaced.
    Add,
    /// `-u`: add new items, replace entries only by newer files.
    Update,
    /// `-f`: replace entries by newer files, add nothing.
    Freshen,
    /// `-d`: delete the entries the patterns match.
    Delete,
}

/// A file system item offered to the archive, as planning sees it.
pub trait Candidate {
    /// The name it is stored under: relative, `/`-separated, a
    /// directory's without its trailing `/`.
    fn name(&self) -> &str;
    /// Where it was found, for messages.
    fn path(&self) -> &Path;
    /// Its modification time, in Unix seconds.
    fn mtime(&self) -> i64;
    /// Whether it is a directory.
    fn is_dir(&self) -> bool;
    /// Its length when it is a regular file (what `-FS` compares and
    /// `-sf` totals); none for anything else, and by default.
    fn size(&self) -> Option<u64> {
        None
    }
    /// Whether `self`, offered under the name `first` already took, is
    /// that same file named twice (`w/h1 ./w/h1`), stored once, rather
    /// than a different file.
    fn same_file(&self, first: &Self) -> bool;
}

/// One entry of the archive being written, in order.
#[derive(Debug)]
pub enum Step<'a, T> {
    /// The existing archive's entry at this index, kept as it was.
    Kept(usize),
    /// An item (new, or replacing a kept entry of its name).
    Item(&'a T),
}

impl<T> Clone for Step<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Step<'_, T> {}

/// What writing an item does to the archive, which Info-ZIP's `zip`
/// reports entry by entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A new name.
    Added,
    /// An entry replaced (`zip` or `zip -u`).
    Updated,
    /// An entry replaced under `-f`.
    Freshened,
}

impl Change {
    /// Info-ZIP's verb for it: `adding`, `updating` or `freshening`.
    pub fn verb(self) -> &'static str {
        match self {
            Change::Added => "adding",
            Change::Updated => "updating",
            Change::Freshened => "freshening",
        }
    }
}

/// What `-d` does to an archive.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Deletion {
    /// The indexes of the entries kept, in order.
    pub kept: Vec<usize>,
    /// The indexes of the entries deleted, in order.
    pub deleted: Vec<usize>,
    /// The indexes of the patterns that matched no entry.
    pub unmatched: Vec<usize>,
}

/// Drops repeated items and refuses two different files under one name
/// ([`Error::RepeatedName`]): an archive with duplicate names cannot be
/// extracted faithfully. The same file named twice (`w/h1 ./w/h1`, as
/// [`Candidate::same_file`] tells) is kept once, as Info-ZIP does.
pub fn dedupe<T: Candidate>(items: Vec<T>) -> Result<Vec<T>> {
    // Each name's first item, by its index in `out`.
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    for item in items {
        match seen.get(item.name()) {
            Some(&first) if item.same_file(&out[first]) => {}
            Some(&first) => {
                return Err(Error::RepeatedName {
                    name: item.name().to_owned(),
                    first: out[first].path().to_path_buf(),
                    second: item.path().to_path_buf(),
                });
            }
            None => {
                seen.insert(item.name().to_owned(), out.len());
                out.push(item);
            }
        }
    }
    Ok(out)
}

/// The items `-u` and `-f` write: a file whose entry in `entries` is not
/// older (in the 2-second steps of a ZIP's DOS time, as Info-ZIP compares)
/// is left out, as is an existing directory; `-f` also leaves out what is
/// new. Other modes write every item.
pub fn newer_only<T: Candidate>(items: Vec<T>, entries: &[Entry], mode: Mode) -> Vec<T> {
    if !matches!(mode, Mode::Update | Mode::Freshen) {
        return items;
    }
    let existing = by_name(entries);
    items
        .into_iter()
        .filter(|i| is_newer(i, &existing, mode))
        .collect()
}

/// The `entries` by name, a folder's without its trailing `/`.
fn by_name(entries: &[Entry]) -> HashMap<&str, &Entry> {
    entries
        .iter()
        .map(|e| (e.name.trim_end_matches('/'), e))
        .collect()
}

/// Whether `-u` (or `-f`, `mode`) writes item `i` over the `existing`
/// entries ([`newer_only`]).
fn is_newer<T: Candidate>(i: &T, existing: &HashMap<&str, &Entry>, mode: Mode) -> bool {
    match existing.get(i.name()) {
        None => mode == Mode::Update,
        Some(_) if i.is_dir() => false,
        Some(e) => i.mtime().div_euclid(2) > e.mtime.div_euclid(2),
    }
}

/// The entries to write: the existing archive's `entries` in their order,
/// each replaced in place by the item of the same name if there is one,
/// then the remaining items (as Info-ZIP updates). With no existing
/// archive (`entries` empty) that is the items in order.
pub fn plan<'a, T: Candidate>(entries: &[Entry], items: &'a [T]) -> Vec<Step<'a, T>> {
    let by_name: HashMap<&str, &T> = items.iter().map(|i| (i.name(), i)).collect();
    let mut placed = HashSet::new();
    let mut steps = Vec::with_capacity(entries.len() + items.len());
    for (i, e) in entries.iter().enumerate() {
        let name = e.name.trim_end_matches('/');
        match by_name.get(name) {
            Some(item) if placed.insert(name.to_string()) => steps.push(Step::Item(*item)),
            // A second kept entry of a replaced name (an archive that
            // already held duplicates) is dropped, not duplicated again.
            Some(_) => {}
            None => steps.push(Step::Kept(i)),
        }
    }
    steps.extend(
        items
            .iter()
            .filter(|i| !placed.contains(i.name()))
            .map(Step::Item),
    );
    steps
}

/// What each step does, for the line Info-ZIP prints about it: an item
/// whose name is not among `entries` is [`Change::Added`], one that
/// replaces an entry [`Change::Updated`] (or [`Change::Freshened`] under
/// `-f`); kept entries change nothing (None).
pub fn changes<T: Candidate>(
    steps: &[Step<'_, T>],
    entries: &[Entry],
    mode: Mode,
) -> Vec<Option<Change>> {
    let existing: HashSet<&str> = entries
        .iter()
        .map(|e| e.name.trim_end_matches('/'))
        .collect();
    steps
        .iter()
        .map(|s| match s {
            Step::Kept(_) => None,
            Step::Item(i) if !existing.contains(i.name()) => Some(Change::Added),
            Step::Item(_) if mode == Mode::Freshen => Some(Change::Freshened),
            Step::Item(_) => Some(Change::Updated),
        })
        .collect()
}

/// Whether pattern `p` names entry `e` as Info-ZIP's `zip -d` and `-U`
/// name entries: by its name, and a folder's also without its trailing
/// `/` (`zip -d a.zip d/sub` deletes the entry `d/sub/`, not what is in it).
pub fn names_entry(p: &Pattern, e: &Entry) -> bool {
    p.matches(&e.name) || (e.name.ends_with('/') && p.matches(e.name.trim_end_matches('/')))
}

/// `-d`: the entries any of `patterns` matches are deleted, the others
/// kept; also which patterns matched nothing (Info-ZIP warns of each, and
/// does nothing when no entry matches at all).
pub fn deletion(entries: &[Entry], patterns: &[Pattern]) -> Deletion {
    let mut hit = vec![false; patterns.len()];
    let mut out = Deletion::default();
    for (i, e) in entries.iter().enumerate() {
        let mut matched = false;
        for (k, p) in patterns.iter().enumerate() {
            if names_entry(p, e) {
                hit[k] = true;
                matched = true;
            }
        }
        if matched {
            out.deleted.push(i);
        } else {
            out.kept.push(i);
        }
    }
    out.unmatched = (0..patterns.len()).filter(|&k| !hit[k]).collect();
    out
}

/// What `-U` copies into `--out`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Copying {
    /// The indexes of the entries copied, in order.
    pub chosen: Vec<usize>,
    /// The indexes of the `named` patterns that name no entry.
    pub unmatched: Vec<usize>,
}

/// `-U`: the entries `named` names (every entry when it is empty), less
/// those `exclude` (`-x`) matches and, when `include` (`-i`) is given,
/// only those it matches. Unlike [`deletion`], a name matches by the
/// whole name only: Info-ZIP's `-U` does not take `d` for the folder
/// entry `d/`.
pub fn copying(
    entries: &[Entry],
    named: &[Pattern],
    exclude: &[Pattern],
    include: &[Pattern],
) -> Copying {
    let names = |p: &Pattern, e: &Entry| p.matches(&e.name);
    let unmatched = (0..named.len())
        .filter(|&k| !entries.iter().any(|e| names(&named[k], e)))
        .collect();
    let chosen = (0..entries.len())
        .filter(|&i| {
            let name = &entries[i].name;
            (named.is_empty() || named.iter().any(|p| names(p, &entries[i])))
                && !exclude.iter().any(|p| p.matches(name))
                && (include.is_empty() || include.iter().any(|p| p.matches(name)))
        })
        .collect();
    Copying { chosen, unmatched }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// An offered file: name, path, mtime, directory, and an identity that
    /// tells the same file named twice.
    #[derive(Debug)]
    struct Offer {
        name: String,
        path: PathBuf,
        mtime: i64,
        dir: bool,
        id: u64,
        size: Option<u64>,
    }

    impl Candidate for Offer {
        fn name(&self) -> &str {
            &self.name
        }
        fn path(&self) -> &Path {
            &self.path
        }
        fn mtime(&self) -> i64 {
            self.mtime
        }
        fn is_dir(&self) -> bool {
            self.dir
        }
        fn same_file(&self, first: &Self) -> bool {
            self.id == first.id
        }
        fn size(&self) -> Option<u64> {
            self.size
        }
    }

    fn file(name: &str, mtime: i64) -> Offer {
        Offer {
            name: name.into(),
            path: PathBuf::from(name),
            mtime,
            dir: false,
            id: 0,
            // As the entries below hold: one byte.
            size: Some(1),
        }
    }

    fn dir(name: &str, mtime: i64) -> Offer {
        Offer {
            dir: true,
            size: None,
            ..file(name, mtime)
        }
    }

    /// The entries of an archive holding `names`, each at `mtime`.
    fn entries(names: &[(&str, i64)]) -> Vec<Entry> {
        let mut w = crate::ZipWriter::new(Vec::new());
        for (n, t) in names {
            match n.strip_suffix('/') {
                Some(d) => w.add_directory(crate::EntryOptions::directory(d).mtime(*t)),
                None => w.add_bytes(crate::EntryOptions::file(*n).mtime(*t), b"x"),
            }
            .unwrap();
        }
        let bytes = w.finish().unwrap();
        crate::ZipArchive::new(std::io::Cursor::new(bytes))
            .unwrap()
            .entries()
            .to_vec()
    }

    /// Steps as `K<index>` for a kept entry, the name for an item.
    fn shown(steps: &[Step<'_, Offer>]) -> Vec<String> {
        steps
            .iter()
            .map(|s| match s {
                Step::Kept(i) => format!("K{i}"),
                Step::Item(o) => o.name.clone(),
            })
            .collect()
    }

    #[test]
    fn items_replace_entries_in_place_and_new_ones_follow() {
        let old = entries(&[("a", 0), ("d/", 0), ("b", 0), ("c", 0)]);
        let items = vec![file("n", 0), file("b", 0), file("d", 0)];
        let steps = plan(&old, &items);
        assert_eq!(shown(&steps), ["K0", "d", "b", "K3", "n"]);
        let verbs: Vec<_> = changes(&steps, &old, Mode::Add)
            .into_iter()
            .map(|c| c.map(Change::verb))
            .collect();
        assert_eq!(
            verbs,
            [
                None,
                Some("updating"),
                Some("updating"),
                None,
                Some("adding")
            ]
        );
        let fresh = changes(&steps, &old, Mode::Freshen);
        assert_eq!(fresh[1], Some(Change::Freshened));
        // No archive: the items in order, all added.
        let steps = plan(&[], &items);
        assert_eq!(shown(&steps), ["n", "b", "d"]);
        assert!(
            changes(&steps, &[], Mode::Add)
                .iter()
                .all(|c| *c == Some(Change::Added))
        );
    }

    #[test]
    fn a_duplicated_entry_replaced_is_written_once() {
        let old = entries(&[("a", 0), ("b", 0), ("a", 0)]);
        let items = vec![file("a", 0)];
        assert_eq!(shown(&plan(&old, &items)), ["a", "K1"]);
    }

    #[test]
    fn update_and_freshen_write_only_newer_files() {
        // DOS time has 2-second steps: 1001 is not newer than 1000.
        let old = entries(&[("old", 1000), ("same", 1000), ("new", 1000), ("d/", 0)]);
        let offered = || {
            let mut d = file("d", 5000);
            d.dir = true;
            vec![
                file("old", 998),
                file("same", 1001),
                file("new", 1002),
                file("fresh", 0),
                d,
            ]
        };
        let names = |v: Vec<Offer>| v.into_iter().map(|o| o.name).collect::<Vec<_>>();
        assert_eq!(
            names(newer_only(offered(), &old, Mode::Update)),
            ["new", "fresh"]
        );
        assert_eq!(names(newer_only(offered(), &old, Mode::Freshen)), ["new"]);
        assert_eq!(newer_only(offered(), &old, Mode::Add).len(), 5);
        // With no archive, -u adds everything (and -f nothing).
        assert_eq!(newer_only(offered(), &[], Mode::Update).len(), 5);
        assert!(newer_only(offered(), &[], Mode::Freshen).is_empty());
    }

    #[test]
    fn the_same_file_twice_is_kept_once_and_two_files_are_refused() {
        let mut again = file("w/h1", 0);
        again.path = PathBuf::from("./w/h1");
        let kept = dedupe(vec![file("w/h1", 0), file("x", 0), again]).unwrap();
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].path, Path::new("w/h1"));
        let mut other = file("w/h1", 0);
        other.path = PathBuf::from("v/../w/h1");
        other.id = 1;
        let err = dedupe(vec![file("w/h1", 0), other]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot repeat names in zip file: w/h1 and v/../w/h1 would both be stored as \"w/h1\""
        );
    }

    #[test]
    fn deletion_keeps_what_no_pattern_matches() {
        let old = entries(&[("a.txt", 0), ("d/", 0), ("d/b.txt", 0), ("c.rs", 0)]);
        let pats = ["*.txt", "nothing", "d/"].map(Pattern::new);
        let d = deletion(&old, &pats);
        assert_eq!(d.kept, [3]);
        assert_eq!(d.deleted, [0, 1, 2]);
        assert_eq!(d.unmatched, [1]);
        let none = deletion(&old, &[Pattern::new("zz")]);
        assert!(none.deleted.is_empty());
        assert_eq!(none.kept, [0, 1, 2, 3]);
    }

    #[test]
    fn copying_names_whole_names_less_excluded() {
        let old = entries(&[("a.txt", 0), ("d/", 0), ("d/b.txt", 0), ("c.rs", 0)]);
        let none: [Pattern; 0] = [];
        let pats = |v: &[&str]| v.iter().map(|p| Pattern::new(p)).collect::<Vec<_>>();
        // `d` does not name the folder entry `d/`, as it does for -d.
        let c = copying(&old, &pats(&["*.txt", "d", "c.rs"]), &none, &none);
        assert_eq!(c.chosen, [0, 2, 3]);
        assert_eq!(c.unmatched, [1]);
        let all = copying(&old, &none, &pats(&["c.rs"]), &none);
        assert_eq!(all.chosen, [0, 1, 2]);
        // `*` matches nothing too, so `d/*` takes the folder entry `d/`.
        let only = copying(&old, &none, &none, &pats(&["d/*"]));
        assert_eq!(only.chosen, [1, 2]);
        assert!(
            copying(&old, &pats(&["zz"]), &none, &none)
                .chosen
                .is_empty()
        );
    }

    #[test]
    fn file_sync_drops_gone_entries_and_writes_files_changed_either_way() {
        let old = entries(&[
            ("same", 1000),
            ("newer", 1000),
            ("older", 1000),
            ("bigger", 1000),
            ("gone", 1000),
            ("d/", 0),
        ]);
        let mut bigger = file("bigger", 1000);
        bigger.size = Some(5);
        // 1001 is in the 2-second step of 1000: the same time.
        let offered = vec![
            file("same", 1001),
            file("newer", 1002),
            file("older", 998),
            bigger,
            dir("d", 5000),
            file("new", 0),
        ];
        let gone = gone(&old, &offered);
        assert_eq!(gone, [4]);
        let items = changed_only(offered, &old);
        let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["newer", "older", "bigger", "new"]);
        let contents = Contents::New { items, gone };
        let (steps, changes) = contents.steps(&old, Mode::Add);
        assert_eq!(
            shown(&steps),
            ["K0", "newer", "older", "bigger", "K5", "new"]
        );
        assert_eq!(changes[1], Some(Change::Updated));
        assert_eq!(changes[5], Some(Change::Added));
        let kept: Contents<Offer> = Contents::Kept(vec![2, 0]);
        assert!(kept.items().is_empty());
        assert_eq!(shown(&kept.steps(&old, Mode::Add).0), ["K2", "K0"]);
    }

    #[test]
    fn show_files_lists_what_an_update_would_read_and_counts_the_new() {
        let old = entries(&[("a", 1000), ("b", 1000), ("d/", 0)]);
        let offered = vec![file("a", 2000), file("b", 1000), dir("d", 0), file("c", 0)];
        let names = |v: Vec<&Offer>| v.into_iter().map(|o| o.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(would_add(&offered, &old, Mode::Update)), ["a", "c"]);
        assert_eq!(names(would_add(&offered, &old, Mode::Freshen)), ["a"]);
        assert_eq!(would_add(&offered, &old, Mode::Add).len(), 4);
        assert_eq!(new_count(&old, &offered), 1);
        let steps = plan(&old, &offered);
        let added = added_names(&steps);
        assert_eq!(
            added,
            [
                ("a".to_string(), "a".to_string()),
                ("b".into(), "b".into()),
                ("d".into(), "d/".into()),
                ("c".into(), "c".into())
            ]
        );
        let mut out = Vec::new();
        write_would_add(&would_add(&offered, &old, Mode::Add), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Would Add/Update:\n  a\n  b\n  d/\n  c\nTotal 4 entries (3 bytes)\n"
        );
    }
}
