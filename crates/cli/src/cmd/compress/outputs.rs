//! Where each input's output goes: the name zstd derives from the input,
//! `--output-dir-flat`/`-mirror`, several inputs joined into one `-o`
//! file, stdout, and what the output keeps of its input (mode, times).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::{Format, Mode, Options};

/// The output named from `input` as zstd names it: `NAME.zst` (`.gz`)
/// when compressing; the suffix taken off (`.tzst` and `.tgz` become
/// `.tar`) when decoding.
pub(super) fn derived_name(input: &Path, mode: Mode, format: Format) -> Result<PathBuf> {
    let name = input.as_os_str().to_string_lossy();
    Ok(match (mode, format) {
        (Mode::Compress, Format::Zstd) => PathBuf::from(format!("{name}.zst")),
        (Mode::Compress, Format::Gzip(_)) => PathBuf::from(format!("{name}.gz")),
        _ => {
            if let Some(stem) = [".zst", ".zstd", ".gz"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
            {
                PathBuf::from(stem)
            } else if let Some(stem) = name
                .strip_suffix(".tzst")
                .or_else(|| name.strip_suffix(".tgz"))
            {
                PathBuf::from(format!("{stem}.tar"))
            } else {
                bail!("unknown suffix (expected .zst or .gz); use -o FILE or -c")
            }
        }
    })
}

/// A directory for the outputs whose names are derived from their
/// inputs' (`-o` and `-c` win over it, as in zstd).
#[derive(Debug, Clone)]
pub enum OutputDir {
    /// `--output-dir-flat DIR`: `DIR/NAME.zst`, the input's folders
    /// dropped.
    Flat(PathBuf),
    /// `--output-dir-mirror DIR`: `DIR/PATH.zst`, the input's path
    /// (its root dropped) kept below DIR.
    Mirror(PathBuf),
}

impl OutputDir {
    /// Where the output `derived` (named from `input`) goes. As zstd, a
    /// mirrored input whose path climbs (`..`) has no place below DIR.
    /// Nothing is made here: outputs are planned before any is written
    /// ([`plan`]); [`make_parent`] makes the folders when one is.
    pub(super) fn place(&self, input: &Path, derived: PathBuf) -> Result<PathBuf> {
        Ok(match self {
            OutputDir::Flat(dir) => dir.join(derived.file_name().unwrap_or_default()),
            OutputDir::Mirror(dir) => {
                use std::path::Component;
                if input.components().any(|c| c == Component::ParentDir) {
                    bail!(
                        "--output-dir-mirror cannot place it into '{}' (its path goes up, ..)",
                        dir.display()
                    );
                }
                let below: PathBuf = derived
                    .components()
                    .filter(|c| matches!(c, Component::Normal(_)))
                    .collect();
                dir.join(below)
            }
        })
    }
}

/// Makes the folders `path` (an output placed by [`OutputDir::place`])
/// needs.
pub(super) fn make_parent(path: &Path) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    Ok(())
}

/// Where one input's output goes.
#[derive(Clone)]
pub(super) enum Sink {
    /// Standard output.
    Stdout,
    /// Nowhere: `-t` decodes and discards.
    Discard,
    /// A file (or a device or FIFO, written in place).
    File(PathBuf),
    /// `-o FILE` with several inputs: the joined file, at this path.
    Joined(PathBuf),
}

/// Every input's output, planned before any is written, and how the
/// outputs meet: two inputs that map to one file (`--output-dir-flat`
/// with two `f`, `a.zst` and `a.gz`, a file given twice), or an output
/// that is another input of the run. `--rm` goes by this plan: see
/// [`Ledger`].
pub(super) struct Plan {
    /// The inputs, in the order they are coded.
    inputs: Vec<PathBuf>,
    /// Each input's sink, or why it has none (an unknown suffix, a
    /// mirrored path that climbs): that input fails when its turn comes.
    pub(super) sinks: Vec<Result<Sink>>,
    /// Each output file's identity ([`identity`]); `None` for stdout,
    /// `-t`, the joined file and devices.
    keys: Vec<Option<PathBuf>>,
    /// The first earlier input whose output is the same file.
    pub(super) first: Vec<Option<usize>>,
    /// Another input of the run that this input's output would replace.
    pub(super) replaces_input: Vec<Option<usize>>,
}

impl Plan {
    /// zstd's warning for each input whose output an earlier input's
    /// output is (zstd 1.5 prints it for `--output-dir-flat`, naming the
    /// file; the other paths get the same line with both inputs named).
    pub(super) fn warnings(&self) -> Vec<String> {
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
    pub(super) fn input(&self, i: usize) -> &Path {
        &self.inputs[i]
    }

    /// Input `i`'s output file, if it has one.
    pub(super) fn output(&self, i: usize) -> Option<&Path> {
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
pub(super) fn plan(inputs: &[PathBuf], sink_for: impl Fn(&Path) -> Result<Sink>) -> Plan {
    let sinks: Vec<Result<Sink>> = inputs.iter().map(|f| sink_for(f)).collect();
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
pub(super) fn identity(path: &Path) -> PathBuf {
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

/// What `--rm` may remove, decided at the end of the run: an input goes
/// only when its output was committed, no later input of the run
/// replaced that output, and it is synced to disk (data and name).
/// Until then every input stays, so a failure or a signal mid-run loses
/// nothing.
pub(super) struct Ledger {
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
    pub(super) fn new(n: usize) -> Ledger {
        Ledger {
            holder: HashMap::new(),
            pending: Vec::new(),
            committed: vec![false; n],
        }
    }

    /// Input `i`'s output file is committed: it holds `i`'s data, until
    /// a later input of the run replaces it.
    pub(super) fn committed(&mut self, plan: &Plan, i: usize) {
        self.committed[i] = true;
        if let Some(key) = &plan.keys[i] {
            self.holder.insert(key.clone(), i);
        }
    }

    /// Whether input `i`'s output was committed in this run.
    pub(super) fn is_committed(&self, i: usize) -> bool {
        self.committed[i]
    }

    /// `--rm` asks for input `i` to go, its output committed.
    pub(super) fn remove_later(&mut self, i: usize) {
        self.pending.push(i);
    }

    /// Removes each input asked for whose output still holds its data,
    /// once every such output is on the disk ([`sync_filesystems`]); one
    /// whose output a later input replaced stays, said unless `quiet`.
    /// Returns whether a removal (or the sync before it) failed, said on
    /// stderr.
    pub(super) fn finish(self, plan: &Plan, quiet: bool) -> bool {
        let inputs = &plan.inputs;
        let mut err = io::stderr();
        let mut going = Vec::new();
        for &i in &self.pending {
            let holder = plan.keys[i].as_ref().and_then(|k| self.holder.get(k));
            match holder {
                Some(&h) if h != i => {
                    // The same file given twice: the later turn removes it.
                    if !quiet && !same_file(&inputs[i], &inputs[h]) {
                        let _ = writeln!(
                            err,
                            "perfkit: {}: kept: its output {} was then overwritten by {}'s",
                            inputs[i].display(),
                            plan.output(i)
                                .map(|p| p.display().to_string())
                                .unwrap_or_default(),
                            inputs[h].display()
                        );
                    }
                }
                _ => going.push(i),
            }
        }
        let outputs: Vec<&Path> = going.iter().filter_map(|&i| plan.output(i)).collect();
        if let Err(e) = sync_filesystems(&outputs) {
            let _ = writeln!(
                err,
                "perfkit: --rm removed no input: the outputs could not be synced to disk: {}",
                super::os_words(&e)
            );
            return true;
        }
        let mut failed = false;
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
                let _ = writeln!(
                    err,
                    "perfkit: {}: removing input after success: {}",
                    input.display(),
                    super::os_words(&e)
                );
                failed = true;
            }
        }
        failed
    }
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

/// With `-o FILE` and several inputs, as zstd: every output goes into
/// FILE, one after the other (zstd's warning says so, unless `-q`), and
/// `--rm` removes nothing. Without `-f` a file output needs a yes, as
/// zstd asks ("Proceed? (y/n): "; under `-q`, or with stdin among the
/// inputs, the answer is no). Returns the options to code with and FILE,
/// created (`None` with one input, `-o -`, or `-t`); `None` when the
/// answer was no.
pub(super) fn join_outputs(
    mut options: Options,
    inputs: &[PathBuf],
) -> Result<Option<(Options, Option<landing::Output>)>> {
    let Some(path) = options.output.clone().filter(|_| inputs.len() > 1) else {
        return Ok(Some((options, None)));
    };
    if options.mode == Mode::Test {
        return Ok(Some((options, None)));
    }
    let mut err = io::stderr();
    if !options.quiet {
        let _ = writeln!(
            err,
            "perfkit: WARNING: all input files will be processed and concatenated into a \
             single output file: {}\nThe concatenated output CANNOT regenerate original file \
             names nor directory structure.{}",
            path.display(),
            if options.remove_input {
                "\nSince it's a destructive operation, input files will not be removed."
            } else {
                ""
            }
        );
    }
    options.remove_input = false;
    if path == Path::new("-") {
        return Ok(Some((options, None)));
    }
    if !options.force {
        let yes = if options.quiet {
            if !options.silent {
                let _ = writeln!(
                    err,
                    "Concatenating multiple processed inputs into a single output loses file \
                     metadata.\nAborting."
                );
            }
            false
        } else if inputs.iter().any(|f| f == Path::new("-")) {
            let _ = writeln!(err, "Proceed? (y/n): stdin is an input - not proceeding.");
            false
        } else {
            let _ = write!(err, "Proceed? (y/n): ");
            let mut answer = String::new();
            let _ = io::stdin().read_line(&mut answer);
            let yes = answer.starts_with(['y', 'Y']);
            if !yes {
                let _ = writeln!(err, "Aborting...");
            }
            yes
        };
        if !yes {
            return Ok(None);
        }
    }
    // Then, as zstd, the file itself, if it is there.
    let stdin_is_input = inputs.iter().any(|f| f == Path::new("-"));
    let force = options.force
        || match may_overwrite(&path, &options, stdin_is_input) {
            Ok(yes) => yes,
            Err(e) => {
                // A no: said already, or to say as it is; nothing written.
                match e.downcast_ref::<super::Said>() {
                    Some(said) if !said.0.is_empty() && !options.silent => {
                        let _ = writeln!(err, "{}", said.0);
                    }
                    Some(_) => {}
                    None => return Err(e),
                }
                return Ok(None);
            }
        };
    let out = landing::Output::create(&path, force)?;
    Ok(Some((options, Some(out))))
}

/// Whether an existing `path` may be replaced though `-f` was not
/// given, asked as zstd asks: on stderr, the answer read from stdin
/// (`y` or `Y` first is yes; anything else, or the end of input, no,
/// with zstd's `Not overwritten`). Under `-q` no one is asked (zstd's
/// `not overwritten`), nor when stdin is an input. `Ok(false)`: `path`
/// is not there (or is a device, written in place); a no is an error
/// already said.
pub(super) fn may_overwrite(path: &Path, options: &Options, stdin_is_input: bool) -> Result<bool> {
    if landing::is_special_file(path) || path.symlink_metadata().is_err() {
        return Ok(false);
    }
    let name = path.display();
    if options.quiet {
        return Err(
            super::Said(format!("perfkit: {name} already exists; not overwritten  ")).into(),
        );
    }
    let mut err = io::stderr();
    if stdin_is_input {
        let _ = writeln!(
            err,
            "perfkit: {name} already exists; stdin is an input - not proceeding."
        );
        return Err(super::Said(String::new()).into());
    }
    let _ = write!(err, "perfkit: {name} already exists; overwrite (y/n) ? ");
    let _ = err.flush();
    let mut answer = String::new();
    let _ = io::stdin().lock().read_line(&mut answer);
    if answer.starts_with(['y', 'Y']) {
        return Ok(true);
    }
    let _ = write!(err, "Not overwritten  \n \n");
    Err(super::Said(String::new()).into())
}

/// An input's access and modification times, for its output.
pub(super) fn input_times(m: &std::fs::Metadata) -> std::fs::FileTimes {
    let mut t = std::fs::FileTimes::new();
    if let Ok(a) = m.accessed() {
        t = t.set_accessed(a);
    }
    if let Ok(w) = m.modified() {
        t = t.set_modified(w);
    }
    t
}

/// Standard output for the writer thread: its own handle on descriptor 1,
/// written without std's line buffering (which splits a block at its last
/// newline). With descriptor 1 closed, std's stdout, which discards.
pub(super) fn stdout_sink() -> Box<dyn Write + Send> {
    use std::os::fd::AsFd;
    match io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(File::from(fd)),
        Err(_) => Box::new(io::stdout()),
    }
}

pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
