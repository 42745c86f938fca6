//! Every output of a run over many inputs, planned before any is written,
//! as a zstd-like file tool needs them: where each input's output goes
//! ([`Sink`], named by the caller), which outputs are one file (two inputs
//! named alike under one output folder, `a.zst` and `a.gz`, a file given
//! twice), which output would replace another input of the run
//! ([`plan`]); then which inputs may be removed once the run is over
//! ([`Ledger`]): only those whose output was committed, still holds their
//! data, and is synced to disk.
//!
//! ```
//! use std::path::{Path, PathBuf};
//! use zstdkit::job::outputs::{Sink, plan};
//!
//! let inputs = [PathBuf::from("one/f"), PathBuf::from("two/f")];
//! // Both into one flat folder: the second output is the first's file.
//! let plan = plan(&inputs, |input: &Path| -> Result<Sink, String> {
//!     let name = input.file_name().ok_or("no name")?;
//!     Ok(Sink::File(Path::new("out").join(name).with_extension("zst")))
//! });
//! assert_eq!(plan.first, [None, Some(0)]);
//! assert_eq!(plan.warnings(), ["WARNING: Two files have same filename: f"]);
//! ```

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Where one input's output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sink {
    /// Standard output.
    Stdout,
    /// Nowhere: `-t` decodes and discards.
    Discard,
    /// A file (or a device or FIFO, written in place).
    File(PathBuf),
    /// `-o FILE` with several inputs: the joined file, at this path.
    Joined(PathBuf),
}

impl Sink {
    /// Whether another process reads the output through a pipe or a
    /// socket (stdout, or a named pipe given as the output): its reader
    /// needs a core of its own while the output is written.
    pub fn piped(&self) -> bool {
        use std::os::fd::AsFd;
        use std::os::unix::fs::FileTypeExt;
        let meta = match self {
            Sink::Stdout => io::stdout()
                .as_fd()
                .try_clone_to_owned()
                .and_then(|fd| File::from(fd).metadata())
                .ok(),
            Sink::File(path) | Sink::Joined(path) => std::fs::metadata(path).ok(),
            Sink::Discard => None,
        };
        meta.is_some_and(|m| m.file_type().is_fifo() || m.file_type().is_socket())
    }
}

/// Every input's output, planned before any is written, and how the
/// outputs meet: two inputs that map to one file (`--output-dir-flat`
/// with two `f`, `a.zst` and `a.gz`, a file given twice), or an output
/// that is another input of the run. Removing inputs goes by this plan:
/// see [`Ledger`]. `E` is why an input has no output, as its caller's
/// `sink_for` said.
pub struct Plan<E> {
    /// The inputs, in the order they are coded.
    inputs: Vec<PathBuf>,
    /// Each input's sink, or why it has none (an unknown suffix, a
    /// mirrored path that climbs): that input fails when its turn comes.
    pub sinks: Vec<Result<Sink, E>>,
    /// Each output file's identity ([`identity`]); `None` for stdout,
    /// `-t`, the joined file and devices.
    keys: Vec<Option<PathBuf>>,
    /// The first earlier input whose output is the same file.
    pub first: Vec<Option<usize>>,
    /// Another input of the run that this input's output would replace.
    pub replaces_input: Vec<Option<usize>>,
}

impl<E> Plan<E> {
    /// zstd's warning for each input whose output an earlier input's
    /// output is (zstd 1.5 prints it for `--output-dir-flat`, naming the
    /// file; the other paths get the same line with both inputs named).
    pub fn warnings(&self) -> Vec<String> {
        let inputs = &self.inputs;
        let mut out = Vec::new();
        for (i, first) in self.first.iter().enumerate() {
            let Some(j) = *first else { continue };
            let (a, b) = (&inputs[j], &inputs[i]);
            out.push(match (a.file_name(), b.file_name()) {
                (Some(x), Some(y)) if x == y => format!(
                    "WARNING: Two files have same filename: {}",
                    x.to_string_lossy()
                ),
                _ => format!(
                    "WARNING: Two files have the same output: {} and {} both go to {}",
                    a.display(),
                    b.display(),
                    self.output(i)
                        .map(|p| p.display().to_string())
                        .unwrap_or_default()
                ),
            });
        }
        out
    }

    /// Input `i`.
    pub fn input(&self, i: usize) -> &Path {
        &self.inputs[i]
    }

    /// Input `i`'s output file, if it has one.
    pub fn output(&self, i: usize) -> Option<&Path> {
        match &self.sinks[i] {
            Ok(Sink::File(p)) => Some(p),
            _ => None,
        }
    }
}

/// Plans every input's output (`sink_for` names one) and finds where
/// they meet, comparing the files the paths name ([`identity`]), not the
/// paths as written: `out/f.zst`, `./out/f.zst` and a link to `out` are
/// one file.
pub fn plan<E>(inputs: &[PathBuf], sink_for: impl Fn(&Path) -> Result<Sink, E>) -> Plan<E> {
    let sinks: Vec<Result<Sink, E>> = inputs.iter().map(|f| sink_for(f)).collect();
    let keys: Vec<Option<PathBuf>> = sinks
        .iter()
        .map(|s| match s {
            Ok(Sink::File(p)) if !landing::is_special_file(p) => Some(identity(p)),
            _ => None,
        })
        .collect();
    // Inputs by the file they are (a link: the file it names, which is
    // what an output written at the link's path replaces); hashed, as
    // `-r` can give a great many.
    let mut input_at: HashMap<PathBuf, Vec<usize>> = HashMap::new();
    for (k, f) in inputs.iter().enumerate() {
        if let Some(key) = (f != Path::new("-"))
            .then(|| f.canonicalize().ok())
            .flatten()
        {
            input_at.entry(key).or_default().push(k);
        }
    }
    let mut seen: HashMap<&Path, usize> = HashMap::new();
    let mut first = vec![None; inputs.len()];
    let mut replaces_input = vec![None; inputs.len()];
    for (i, key) in keys.iter().enumerate() {
        let Some(key) = key else { continue };
        match seen.get(key.as_path()) {
            Some(&j) => first[i] = Some(j),
            None => {
                seen.insert(key, i);
            }
        }
        // An input replacing itself is `one`'s "input and output are the
        // same file".
        replaces_input[i] = input_at
            .get(key)
            .and_then(|at| at.iter().copied().find(|&k| k != i));
    }
    Plan {
        inputs: inputs.to_vec(),
        sinks,
        keys,
        first,
        replaces_input,
    }
}

/// The file `path` names, as comparable as paths get: the path resolved
/// (links followed, as [`landing::Output::create`] follows them)
/// when it exists; else its deepest existing folder resolved and the rest
/// of the path appended, with `.` and `..` taken lexically (the folders
/// below do not exist yet, so none of them is a link).
pub fn identity(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let parts: Vec<_> = absolute.components().collect();
    for cut in (0..parts.len()).rev() {
        let base: PathBuf = parts[..cut].iter().collect();
        let Ok(mut p) = base.canonicalize() else {
            continue;
        };
        for c in &parts[cut..] {
            match c {
                std::path::Component::ParentDir => {
                    p.pop();
                }
                std::path::Component::Normal(n) => p.push(n),
                _ => {}
            }
        }
        return p;
    }
    absolute
}

/// Why an input may not write its planned output
/// ([`Ledger::may_write`]).
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The output is another input of the run, named as it is.
    #[error("{} is also an input of this run; not overwritten", .0.display())]
    IsInput(PathBuf),
    /// The output is another input of the run, named otherwise.
    #[error(
        "{} is also an input of this run (as {}); not overwritten",
        path.display(),
        input_name(other)
    )]
    IsInputAs {
        /// The output.
        path: PathBuf,
        /// The input it is, as the run names it.
        other: PathBuf,
    },
    /// An earlier input of the run wrote the output.
    #[error(
        "{} already exists; not overwritten ({} was written to it in this run)",
        path.display(),
        input_name(by)
    )]
    WrittenInRun {
        /// The output.
        path: PathBuf,
        /// The input that wrote it.
        by: PathBuf,
    },
}

/// An input as a refusal names it: `stdin` for `-`.
fn input_name(p: &Path) -> String {
    if p == Path::new("-") {
        "stdin".into()
    } else {
        p.display().to_string()
    }
}

/// Which inputs may be removed (a zstd-like tool's `--rm`), decided at the
/// end of the run: an input goes
/// only when its output was committed, no later input of the run
/// replaced that output, and it is synced to disk (data and name).
/// Until then every input stays, so a failure or a signal mid-run loses
/// nothing.
pub struct Ledger {
    /// Each output file's last writer in the run, by [`identity`].
    holder: HashMap<PathBuf, usize>,
    /// The inputs whose output was committed, to remove at the end if
    /// they still hold it.
    pending: Vec<usize>,
    /// The inputs whose output was committed, whatever `--rm` says.
    committed: Vec<bool>,
}

impl Ledger {
    /// A ledger for `n` inputs.
    pub fn new(n: usize) -> Ledger {
        Ledger {
            holder: HashMap::new(),
            pending: Vec::new(),
            committed: vec![false; n],
        }
    }

    /// Input `i`'s output file is committed: it holds `i`'s data, until
    /// a later input of the run replaces it.
    pub fn committed<E>(&mut self, plan: &Plan<E>, i: usize) {
        self.committed[i] = true;
        if let Some(key) = &plan.keys[i] {
            self.holder.insert(key.clone(), i);
        }
    }

    /// Whether input `i`'s output was committed in this run.
    pub fn is_committed(&self, i: usize) -> bool {
        self.committed[i]
    }

    /// Whether input `i` may write its planned output `path`: not over
    /// another input of the run, and, without `force`, not over the
    /// output an earlier input of the run wrote (zstd's refusal, in its
    /// words).
    pub fn may_write<E>(
        &self,
        plan: &Plan<E>,
        i: usize,
        path: &Path,
        force: bool,
    ) -> Result<(), Refusal> {
        if let Some(k) = plan.replaces_input[i] {
            let other = plan.input(k);
            if other == path {
                return Err(Refusal::IsInput(path.to_path_buf()));
            }
            return Err(Refusal::IsInputAs {
                path: path.to_path_buf(),
                other: other.to_path_buf(),
            });
        }
        if let Some(j) = plan.first[i]
            && !force
            && self.is_committed(j)
        {
            return Err(Refusal::WrittenInRun {
                path: path.to_path_buf(),
                by: plan.input(j).to_path_buf(),
            });
        }
        Ok(())
    }

    /// Input `i` is to go at the end, its output committed.
    pub fn remove_later(&mut self, i: usize) {
        self.pending.push(i);
    }

    /// Removes each input asked for whose output still holds its data,
    /// once every such output is on the disk (one `syncfs` per filesystem); one
    /// whose output a later input replaced stays, and is named in
    /// [`Settled::kept`].
    pub fn settle<E>(self, plan: &Plan<E>) -> Settled {
        let inputs = &plan.inputs;
        let mut kept = Vec::new();
        let mut going = Vec::new();
        for &i in &self.pending {
            let holder = plan.keys[i].as_ref().and_then(|k| self.holder.get(k));
            match holder {
                Some(&h) if h != i => {
                    // The same file given twice: the later turn removes it.
                    if !same_file(&inputs[i], &inputs[h]) {
                        kept.push((i, h));
                    }
                }
                _ => going.push(i),
            }
        }
        let outputs: Vec<&Path> = going.iter().filter_map(|&i| plan.output(i)).collect();
        if let Err(e) = sync_filesystems(&outputs) {
            return Settled {
                kept,
                removed: Err(e),
            };
        }
        let mut failed = Vec::new();
        // One file given by two paths (`x/f` and a link's `l/f`) goes once.
        let mut removed: HashSet<PathBuf> = HashSet::new();
        for i in going {
            let input = &inputs[i];
            // The directory entry itself (a link, not what it names:
            // removing the link is what --rm does to it).
            let dir = input
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let me = match input.file_name() {
                Some(name) => identity(dir).join(name),
                None => identity(input),
            };
            if !removed.insert(me) {
                continue;
            }
            if let Err(e) = std::fs::remove_file(input) {
                failed.push((i, e));
            }
        }
        Settled {
            kept,
            removed: Ok(failed),
        }
    }
}

/// What [`Ledger::settle`] did.
#[derive(Debug)]
pub struct Settled {
    /// Inputs kept because a later input's output replaced theirs: (the
    /// input, the later input), in the order they were asked to go.
    pub kept: Vec<(usize, usize)>,
    /// The inputs that could not be removed, each with why; or, when the
    /// outputs could not be synced to disk first, that error, and then no
    /// input was removed.
    pub removed: io::Result<Vec<(usize, io::Error)>>,
}

/// Puts `outputs` (renamed into place, not yet synced) on the disk: one
/// `syncfs` per filesystem they are on, which writes back their data and
/// their names with everything else pending there. One call for a run of
/// 10,000 files, where an fsync of each file and folder as it was made
/// took 9 ms a file on ext4.
fn sync_filesystems(outputs: &[&Path]) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    let mut devices = HashSet::new();
    let mut folders = HashSet::new();
    for out in outputs {
        let dir = out
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !folders.insert(dir) {
            continue;
        }
        let folder = File::open(dir)?;
        if !devices.insert(folder.metadata()?.dev()) {
            continue;
        }
        // SAFETY: `syncfs` takes a descriptor, here one `folder` owns and
        // keeps open across the call, and touches no memory of ours.
        if unsafe { libc::syncfs(folder.as_raw_fd()) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Gives `output`, the file made from an input whose metadata is `meta`,
/// the input's permissions, and its access and modification times when
/// the input is a regular file, as zstd does (`UTIL_setFileStat`) in both
/// directions, so `make` and `rsync -t` see the data as old as it is.
/// Best effort, as zstd's: a file system that refuses either keeps the
/// output as it was made.
pub fn copy_stat(output: &std::fs::File, meta: &std::fs::Metadata, regular: bool) {
    let _ = output.set_permissions(meta.permissions());
    if regular {
        let _ = output.set_times(input_times(meta));
    }
}

/// An input's access and modification times, for its output.
pub fn input_times(m: &std::fs::Metadata) -> std::fs::FileTimes {
    let mut t = std::fs::FileTimes::new();
    if let Ok(a) = m.accessed() {
        t = t.set_accessed(a);
    }
    if let Ok(w) = m.modified() {
        t = t.set_modified(w);
    }
    t
}

/// Whether `a` and `b` name one existing file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{Ledger, Sink, copy_stat, plan};
    use std::path::{Path, PathBuf};

    #[test]
    fn an_output_takes_its_inputs_mode_and_times_as_zstd_gives_them() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (input, output) = (dir.path().join("in"), dir.path().join("out"));
        std::fs::write(&input, b"data").unwrap();
        std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o640)).unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30);
        let file = std::fs::File::options().write(true).open(&input).unwrap();
        file.set_times(std::fs::FileTimes::new().set_modified(old))
            .unwrap();
        let meta = std::fs::metadata(&input).unwrap();
        for (regular, mtime_copied) in [(true, true), (false, false)] {
            let _ = std::fs::remove_file(&output);
            let out = std::fs::File::create(&output).unwrap();
            copy_stat(&out, &meta, regular);
            let got = std::fs::metadata(&output).unwrap();
            assert_eq!(got.permissions().mode() & 0o777, 0o640);
            assert_eq!(got.modified().unwrap() == old, mtime_copied);
        }
    }

    #[test]
    fn an_input_whose_output_a_later_one_replaced_is_kept_and_the_rest_go() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        let out = dir.path().join("out");
        for d in [&a, &b, &c, &out] {
            std::fs::create_dir(d).unwrap();
        }
        let inputs: Vec<PathBuf> = vec![a.join("f"), b.join("f"), c.join("g")];
        for f in &inputs {
            std::fs::write(f, b"data").unwrap();
        }
        let flat = |input: &Path| -> Result<Sink, ()> {
            Ok(Sink::File(
                out.join(input.file_name().unwrap()).with_extension("zst"),
            ))
        };
        let plan = plan(&inputs, flat);
        assert_eq!(plan.first, [None, Some(0), None]);
        assert_eq!(plan.replaces_input, [None, None, None]);
        let mut ledger = Ledger::new(inputs.len());
        for i in 0..inputs.len() {
            std::fs::write(plan.output(i).unwrap(), b"coded").unwrap();
            ledger.committed(&plan, i);
            ledger.remove_later(i);
        }
        let settled = ledger.settle(&plan);
        assert_eq!(settled.kept, [(0, 1)]);
        assert!(settled.removed.unwrap().is_empty());
        let left: Vec<bool> = inputs.iter().map(|f| f.exists()).collect();
        assert_eq!(left, [true, false, false]);
    }

    #[test]
    fn an_output_that_is_another_input_is_found_through_other_spellings() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        let fz = dir.path().join("f.zst");
        std::fs::write(&f, b"x").unwrap();
        std::fs::write(&fz, b"y").unwrap();
        // `f.zst` decoded into `f`, which is also an input of the run.
        let inputs = vec![f.clone(), dir.path().join(".").join("f.zst")];
        let plan = plan(&inputs, |input: &Path| -> Result<Sink, ()> {
            Ok(match input.extension() {
                Some(_) => Sink::File(input.with_extension("")),
                None => Sink::Stdout,
            })
        });
        assert_eq!(plan.replaces_input, [None, Some(0)]);
        assert_eq!(
            plan.output(1),
            Some(dir.path().join(".").join("f").as_path())
        );
    }
}
