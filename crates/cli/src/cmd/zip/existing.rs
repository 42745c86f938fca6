//! The existing archive that `zip` updates: opening it, what `-d` keeps,
//! and what `-FS` and `-sf` compare against its entries; apart from
//! writing the new archive, which only reads the result.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use zipstream::ZipArchive;
use zipstream::pattern::Pattern;
use zipstream::update::{self, Mode};

use super::Options;
use super::items::{self, Item};

/// An existing archive being updated: its entries that no new item
/// replaces are written again, in their places, ahead of the new ones.
pub(super) struct Update {
    pub(super) archive: ZipArchive<io::BufReader<fs::File>>,
    /// Where the archive lives, for messages.
    pub(super) path: PathBuf,
}

/// One entry of the archive being written: a kept entry of the
/// [`Update`], or an [`Item`].
pub(super) type Step<'a> = update::Step<'a, Item>;

/// The entries of the archive being updated, none without one.
pub(super) fn entries(update: Option<&Update>) -> &[zipstream::Entry] {
    update.map_or(&[], |u| u.archive.entries())
}

/// Opens `archive` for update if it is an existing regular file: a ZIP
/// archive is updated; anything else (arguments swapped, a typo) is
/// refused and left untouched, as Info-ZIP refuses it.
pub(super) fn open_for_update(archive: &Path) -> Result<Option<Update>> {
    let Ok(meta) = fs::metadata(archive) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Ok(None);
    }
    let name = archive.display();
    let f = fs::File::open(archive).with_context(|| format!("opening {name}"))?;
    let a = ZipArchive::new(io::BufReader::with_capacity(64 << 10, f))
        .map_err(|e| anyhow!("{name} exists and is not a ZIP archive ({e}); not replacing it"))?;
    // Encrypted entries are kept as they are (copied, never decoded), so
    // they need no password here.
    Ok(Some(Update {
        archive: a,
        path: archive.to_path_buf(),
    }))
}

/// Says so when the archive being updated had data prepended without
/// `zip -A` (its offsets do not count it): Info-ZIP refuses to update
/// it ("Zip file structure invalid"); the rewrite keeps that data and
/// writes offsets that count it, which changes what its stub may expect.
pub(super) fn note_unadjusted(archive: &ZipArchive<io::BufReader<fs::File>>, shown: &str) {
    if let Some(shift) = archive.offsets_off() {
        eprintln!(
            "perfkit zip: {shown}: its offsets do not count the {shift} bytes before its first \
             entry (prepended without zip -A); those bytes are kept and the offsets written \
             counting them, as zip -A does"
        );
    }
}

/// `-d`: the indexes of the entries kept (none under `-sf`, which lists
/// what would go instead); prints those deleted. Fails,
/// changing nothing, when no pattern matches (Info-ZIP's "Nothing to
/// do!"), and warns of each pattern that matches nothing.
pub(super) fn delete(u: &Update, opts: &Options) -> Result<Option<Vec<usize>>> {
    if opts.paths.is_empty() {
        bail!("-d needs the names (or patterns) of the entries to delete");
    }
    let patterns: Vec<Pattern> = opts
        .paths
        .iter()
        .map(|p| Pattern::new(&p.to_string_lossy()))
        .collect();
    let entries = u.archive.entries();
    let plan = update::deletion(entries, &patterns);
    for &k in &plan.unmatched {
        items::warn_not_matched(opts, &patterns[k].text());
    }
    if opts.show_files {
        // -sf -d: Info-ZIP's list of what would go, nothing written.
        let mut out = io::stdout().lock();
        update::write_would_delete(entries, &plan.deleted, &mut out)
            .and_then(|()| out.flush())
            .context("writing to standard output")?;
        return Ok(None);
    }
    if plan.deleted.is_empty() {
        bail!(
            "nothing to do: no entry of {} matches; left as it was",
            perfkit::printable::name(&u.path.display().to_string())
        );
    }
    if !opts.quiet {
        let deleted: Vec<&zipstream::Entry> = plan.deleted.iter().map(|&i| &entries[i]).collect();
        for line in super::announce::deleting_lines(opts.display, &deleted, false) {
            println!("{line}");
        }
    }
    // The log's lines and total count the entries deleted, -q or not.
    for &i in &plan.deleted {
        super::log::info(&format!(
            "deleting: {}",
            perfkit::printable::name(&entries[i].name)
        ));
    }
    let bytes = update::total_size(entries, &plan.deleted);
    super::log::count(plan.deleted.len() as u64, bytes);
    Ok(Some(plan.kept))
}

/// `-U`: the indexes of the entries to copy into `--out`, as
/// [`update::copying`] chooses them ([`print_copying`] prints them). None when no entry is chosen (the caller says "Nothing to
/// do!"); a pattern that names no entry is warned of (`zip warning: not
/// in archive:`, not under `-q`).
pub(super) fn copied(u: &Update, opts: &Options) -> Result<Option<Vec<usize>>> {
    let compile = |v: &[String]| v.iter().map(|p| Pattern::new(p)).collect::<Vec<_>>();
    let names: Vec<String> = opts
        .paths
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let (named, exclude, include) = (
        compile(&names),
        compile(&opts.exclude),
        compile(&opts.include),
    );
    let archive = opts.archive.as_deref().unwrap_or(Path::new(""));
    let plan = update::copying(u.archive.entries(), &named, &exclude, &include);
    for &k in plan.unmatched.iter().filter(|_| !opts.quiet) {
        super::println_info_zip(
            archive,
            &format!(
                "\tzip warning: not in archive: {}",
                perfkit::printable::name(&named[k].text())
            ),
        );
    }
    Ok(Some(plan.chosen).filter(|c| !c.is_empty()))
}

/// `-U`'s ` copying: NAME` lines for the entries `chosen` (none under `-q`).
pub(super) fn print_copying(u: &Update, chosen: &[usize], opts: &Options) -> Result<()> {
    if !opts.quiet {
        let mut out = io::stdout().lock();
        for &i in chosen {
            let name = perfkit::printable::name(&u.archive.entries()[i].name);
            writeln!(out, " copying: {name}").context("writing to standard output")?;
        }
        out.flush().context("writing to standard output")?;
    }
    Ok(())
}

/// `-sf`: Info-ZIP's list of what would be added or updated, and its
/// total, on stdout; nothing is written.
pub(super) fn show_files(
    found: &[Item],
    entries: &[zipstream::Entry],
    mode: Mode,
) -> Result<ExitCode> {
    // What an update would leave alone is not listed (Info-ZIP lists the
    // files it would read).
    let chosen = update::would_add(found, entries, mode);
    let mut out = io::stdout().lock();
    update::write_would_add(&chosen, &mut out)
        .and_then(|()| out.flush())
        .context("writing to standard output")?;
    Ok(ExitCode::SUCCESS)
}
