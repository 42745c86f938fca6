//! What the archive `zip` writes will hold, chosen before anything is
//! written: Info-ZIP's habits with an archive and no paths, the old
//! entries kept (`-U`, `-d`, `-A` or `-z` alone), or the files found
//! beside them.

use std::fs;
use std::io::{self, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use zipstream::update::{self, Mode};

use super::args::usage_error;
use super::existing::{self, Update, delete, entries, show_files};
use super::finished::{set_latest_time, test_existing};
use super::items::{self, Item};
use super::{Options, Place, announce, println_info_zip};

/// What the new archive holds, chosen before anything is written.
pub(super) type Contents = update::Contents<Item>;

/// Info-ZIP's habits with an archive and no paths: `-A`'s lines, `-sf`'s
/// listing, `-T` alone, `-f` and `-u` over every entry's file, `-o`
/// alone and "Nothing to do!". `Break` when that is the whole run.
pub(super) fn archive_alone(
    place: &Place,
    opts: &mut Options,
    update: Option<&Update>,
    no_paths: bool,
) -> Result<ControlFlow<ExitCode>> {
    let shown = &place.shown;
    if let (Some(u), true) = (update, opts.adjust) {
        // Info-ZIP's lines for -A, on stdout; `-q` silences them.
        let off = u.archive.offsets_off();
        if !opts.quiet {
            println!("{}", offsets_line(off));
        }
        // Alone with nothing to adjust: the archive is left as it is.
        if off.is_none() && no_paths && opts.mode != Mode::Freshen && opts.mode != Mode::Update {
            return Ok(ControlFlow::Break(ExitCode::SUCCESS));
        }
    }
    if opts.show_files && no_paths {
        // Info-ZIP's `zip -sf ARCHIVE`: what the archive holds.
        let Some(u) = update else {
            bail!("{shown}: no such archive (-sf alone lists an existing one)");
        };
        let mut out = io::stdout().lock();
        update::write_contains(u.archive.entries(), &mut out)
            .and_then(|()| out.flush())
            .context("writing to standard output")?;
        return Ok(ControlFlow::Break(ExitCode::SUCCESS));
    }
    if let (Some(u), true) = (update, no_paths && !opts.copy) {
        // Info-ZIP's habits with an archive alone: `-T` tests it as it
        // is; `-f` and `-u` look at the file of every entry's name.
        if opts.test && opts.mode == Mode::Add && !opts.adjust && opts.out.is_none() {
            place.scanned(0);
            return test_existing(&place.archive, shown, opts).map(ControlFlow::Break);
        }
        if matches!(opts.mode, Mode::Freshen | Mode::Update) {
            opts.paths = u
                .archive
                .entries()
                .iter()
                .filter(|e| e.kind() != zipstream::EntryKind::Directory)
                .map(|e| PathBuf::from(&e.name))
                .filter(|p| fs::symlink_metadata(p).is_ok())
                .collect();
            if opts.paths.is_empty() {
                bail!(
                    "nothing to do: no file of {shown}'s entries is here to freshen; left as it was"
                );
            }
        }
    }
    if no_paths
        && opts.mode == Mode::Add
        && !opts.adjust
        && !opts.archive_comment
        && !opts.copy
        && opts.out.is_none()
    {
        // `zip -o a.zip`: the archive takes the time of its newest entry.
        if opts.latest_time && update.is_some() {
            set_latest_time(&place.archive, shown)?;
            return Ok(ControlFlow::Break(ExitCode::SUCCESS));
        }
        // An archive and nothing to put in it: Info-ZIP's line.
        println_info_zip(
            &place.archive,
            &format!("\nzip error: Nothing to do! ({shown})"),
        );
        return Ok(ControlFlow::Break(ExitCode::FAILURE));
    }
    Ok(ControlFlow::Continue(()))
}

/// Chooses what the new archive holds: old entries only (`-U`, `-d`,
/// `-A` or `-z` alone) or the files found; `Break` when nothing is
/// written.
pub(super) fn choose(
    place: &Place,
    opts: &Options,
    update: Option<&Update>,
    no_paths: bool,
) -> Result<ControlFlow<ExitCode, Contents>> {
    let shown = &place.shown;
    if opts.copy {
        // -U: the entries named, copied as they are into --out (their
        // lines come as Info-ZIP goes through the old archive).
        place.step("Scanning archive entries");
        let u = update.expect("checked above");
        if opts.fix {
            // -F: every entry (it takes no paths), as Info-ZIP's.
            if !opts.quiet {
                println!("Fix archive (-F) - assume mostly intact archive");
                println!("{}", offsets_line(u.archive.offsets_off()));
            }
        }
        let chosen = existing::copied(u, opts)?;
        place.scanned(0);
        let Some(kept) = chosen else {
            println_info_zip(
                &place.archive,
                &format!("\nzip error: Nothing to do! ({shown})"),
            );
            return Ok(ControlFlow::Break(ExitCode::FAILURE));
        };
        place.going_through();
        existing::print_copying(u, &kept, opts)?;
        Ok(ControlFlow::Continue(Contents::Kept(kept)))
    } else if (opts.adjust || opts.archive_comment) && no_paths && opts.mode == Mode::Add {
        if update.is_none() {
            bail!("{shown}: no such archive (-z alone changes an existing one's comment)");
        }
        // -A or -z alone: every entry kept, written again (after the stub
        // with offsets that count it; with the new comment).
        let n = entries(update).len();
        Ok(ControlFlow::Continue(Contents::Kept((0..n).collect())))
    } else if opts.mode == Mode::Delete {
        place.step("Scanning files");
        place.scanned(0);
        // Info-ZIP prints what it deletes as it goes through the old
        // archive, so after these.
        place.going_through();
        match delete(update.expect("checked above"), opts)? {
            Some(kept) => Ok(ControlFlow::Continue(Contents::Kept(kept))),
            None => Ok(ControlFlow::Break(ExitCode::SUCCESS)),
        }
    } else {
        gather(place, opts, update)
    }
}

/// The files found for the new archive, beside the old entries (`-FS`:
/// less the entries whose file is gone); `Break` when there is nothing to
/// do, or `-sf` only lists them.
fn gather(
    place: &Place,
    opts: &Options,
    update: Option<&Update>,
) -> Result<ControlFlow<ExitCode, Contents>> {
    let shown = &place.shown;
    let nothing_to_do = || {
        println_info_zip(
            &place.archive,
            &format!("\nzip error: Nothing to do! ({shown})"),
        );
        Ok(ControlFlow::Break(ExitCode::FAILURE))
    };
    place.step("Scanning files");
    let mut found = match collect_except(opts, place.local.then_some(place.archive.as_path())) {
        Ok(found) => found,
        // Its lines are printed; perfkit's exit code.
        Err(e) if e.is::<items::MustMatch>() => return Ok(ControlFlow::Break(ExitCode::FAILURE)),
        Err(e) => return Err(e),
    };
    if opts.no_dir_entries {
        found.items.retain(|i| !i.meta.is_dir());
    }
    // -t and -tt: only what was modified from (before) that day on.
    if let Some(from) = opts.modified_from {
        found.items.retain(|i| items::mtime(&i.meta) >= from);
    }
    if let Some(before) = opts.modified_before {
        found.items.retain(|i| items::mtime(&i.meta) < before);
    }
    if opts.dos_names {
        for i in &mut found.items {
            i.name = items::dos_name(&i.name);
        }
    }
    let entries = entries(update);
    // Info-ZIP counts the files that are new to the archive.
    place.scanned(update::new_count(entries, &found.items));
    if found.items.is_empty() && opts.mode == Mode::Add && found.unmatched == 0 {
        // Everything left out (-x, -i, -t, -D): Info-ZIP's line.
        return nothing_to_do();
    }
    // Every name warned of and nothing else to store: Info-ZIP's
    // "Nothing to do!" (its exit 12), the archive left as it was.
    if found.items.is_empty() && found.unmatched > 0 && opts.mode != Mode::Add {
        // Info-ZIP's -u and -f stop after the warnings, saying no more.
        return Ok(ControlFlow::Break(ExitCode::FAILURE));
    }
    if found.items.is_empty() && found.unmatched > 0 {
        // Info-ZIP's lines after its warnings, on stdout (stderr
        // when the archive goes there), `-q` or not; perfkit's exit
        // code (docs/exit-codes.md).
        return nothing_to_do();
    }
    let found_items = match update::dedupe(found.items) {
        Ok(items) => items,
        Err(e) => return Ok(ControlFlow::Break(usage_error(&e.to_string()))),
    };
    // -FS: the entries with no file among those found go.
    let gone: Vec<usize> = if opts.filesync {
        update::gone(entries, &found_items)
    } else {
        Vec::new()
    };
    if opts.show_files {
        return show_files(&found_items, entries, opts.mode).map(ControlFlow::Break);
    }
    let items = if opts.filesync {
        update::changed_only(found_items, entries)
    } else {
        update::newer_only(found_items, entries, opts.mode)
    };
    if !opts.quiet {
        let gone: Vec<&zipstream::Entry> = gone.iter().map(|&i| &entries[i]).collect();
        for line in announce::deleting_lines(opts.display, &gone, true) {
            println!("{line}");
        }
    }
    if items.is_empty() && gone.is_empty() && opts.filesync {
        // Info-ZIP's -FS with everything in step: the archive stays.
        if !opts.quiet {
            println!("Archive is current");
        }
        return Ok(ControlFlow::Break(ExitCode::SUCCESS));
    }
    if items.is_empty() && gone.is_empty() && opts.mode != Mode::Add {
        bail!("nothing to do: {shown} is up to date (no newer files for -u/-f); left as it was");
    }
    Ok(ControlFlow::Continue(Contents::New { items, gone }))
}

/// Info-ZIP's line about the offsets `-A` and `-F` correct (`off`).
fn offsets_line(off: Option<u64>) -> String {
    match off {
        Some(shift) => format!("Zip entry offsets appear off by {shift} bytes - correcting..."),
        None => "Zip entry offsets do not need adjusting".to_string(),
    }
}

/// The items to add, less the archive itself when it is a local file
/// (`zip -r . ` from its directory never stores it).
fn collect_except(opts: &Options, archive: Option<&Path>) -> Result<items::Found> {
    let mut found = items::collect(opts)?;
    if let Some(archive) = archive {
        found.without_file(archive);
    }
    Ok(found)
}
