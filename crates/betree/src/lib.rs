//! betree: a boolean-expression index with the expression language and
//! the match semantics of the C BE-Tree library adgear/be-tree (Sadoghi &
//! Jacobsen, SIGMOD 2011), insert *and* delete, a cooperative search that
//! counts its work in reductions, and readers/writers for the reference
//! benchmark files.
//!
//! The index itself is not a BE-Tree: there is no tree of attribute
//! partitions and value clusters but a counting index in the manner of the
//! k-index (Whang et al., VLDB 2009) in front of compiled expressions:
//! every top-level conjunct that is a boolean, an equality, a set or list
//! membership or an integer/float range is posted, the predicates an event
//! makes true are found by value (hash probes and sorted thresholds), and
//! only expressions whose every posted conjunct was hit are evaluated. On
//! the reference workload (5,000 random `and`/`or`/`not` expressions over
//! 128 booleans, each naming every attribute) there is little to prune and
//! the time goes into evaluation, which the compiled form makes fast: about
//! 0.2–0.3 ms per event on this project's machine (`cargo run --release -p
//! perfkit-bench --example betree_quick`), against the 13.3 ms per event issue 4 quotes
//! for the C BE-Tree on the same workload. On the ad-targeting profile
//! ([`workload`]) the counting cuts the expressions evaluated to about the
//! ones that match (`cargo run --release -p betree --example scale`).
//!
//! # How it is built
//!
//! * [`domain`]: attribute types, undefined policy, bounds ([`Schema`]).
//! * the language: a lexer and parser with errors naming the column and what
//!   was expected, then a type checker run at insert time; predicates on an
//!   undefined attribute are false (negated forms included; only `not`
//!   turns that into true), as in the C library, and `is null` is the only
//!   test of absence.
//! * [`Event`]: values by attribute, from JSON or [`EventBuilder`]; booleans
//!   also sit in a bitset.
//! * [`Index`]: each expression posts its top-level conjuncts that an
//!   event can only satisfy with certain values (`b`, `i = 3`,
//!   `s in ("a", "b")`, `"x" in tags`, `tags one of (...)`, `i >= 18`);
//!   a search counts, per expression, the posted conjuncts the event's
//!   values hit and evaluates only the expressions that reach their count
//!   (and those with nothing to post). Expressions are stored *compiled*: a
//!   jump program per expression (one step per leaf,
//!   `and`/`or`/`not` turned into jump targets, operands ordered so the one
//!   likely to decide runs first), evaluated four at a time, branch-free.
//!   Predicates decidable by value (equality, sets, membership, ranges) are
//!   answered from the selection's lookups with no comparison of strings.
//!   Predicates other than bare booleans are interned index-wide and
//!   memoized per event, so a predicate shared by many expressions is
//!   evaluated once per event. Insert and delete are both supported.
//! * strings: every string literal an expression compares by equality
//!   (`=`, `in`, membership, `one of`/`none of`/`all of`) is interned per
//!   attribute, and a search numbers the event's strings once, before its
//!   probes; from there on, evaluation and the key tables compare numbers.
//!   Only `contains`/`starts_with`/`ends_with` read bytes.
//! * [`SearchIter`]: the cooperative search counting reductions (selection
//!   included), with a documented bound on how far one step overruns its
//!   budget, and [`Index::search_async`] (feature `tokio`, on by default) which yields to tokio between
//!   budgeted steps.
//! * [`Index::search_batch`]: 512 events per pass, one bit per event, over a
//!   small accumulator bytecode.
//! * [`reference`](mod@reference): the erl-be-tree benchmark files and a
//!   seeded generator (the `perfkit-bench` crate times that benchmark).
//! * [`stream`]: an expression file into an index, events streamed from an
//!   event file and their matching ids streamed out as lines.
//!
//! ```
//! use betree::{AttrType, Domain, Event, EventBuilder, Index, Schema};
//!
//! let schema = Schema::from_domains([
//!     Domain::new("age", AttrType::Int, false),
//!     Domain::new("tags", AttrType::StrList, true),
//!     Domain::new("vip", AttrType::Bool, true),
//! ])?;
//! let mut index = Index::new(schema.clone());
//! index.insert(1, r#"age >= 18 and "sports" in tags"#)?;
//! index.insert(2, "vip or tags is null")?;
//! index.insert(3, "age < 18")?;
//!
//! let ev = Event::from_json(&schema, r#"{"age": 31, "tags": ["sports"], "vip": null}"#)?;
//! assert_eq!(index.search(&ev)?, vec![1]);
//!
//! let ev = EventBuilder::new(&schema).int("age", 12)?.bool("vip", true)?.build();
//! assert_eq!(index.search(&ev)?, vec![2, 3]);
//!
//! // The cooperative search gives the same answer in budgeted steps.
//! let mut it = index.search_iter(&ev)?;
//! let ids = loop {
//!     if let betree::SearchStep::Done(ids) = index.search_next(&mut it, 4) {
//!         break ids;
//!     }
//! };
//! assert_eq!(ids, vec![2, 3]);
//! # Ok::<(), betree::Error>(())
//! ```

#![deny(unsafe_code)]

mod batch;
mod coop;
mod counting;
pub mod domain;
mod event;
mod expr;
pub mod fuzzing;
mod index;
mod lex;
mod parse;
mod prefetch;
mod program;
pub mod reference;
mod selection;
pub mod stream;
mod strings;
pub mod workload;

pub use batch::{BatchPath, MatchSink};
pub use coop::{SearchIter, SearchStep};
pub use domain::{AttrId, AttrType, Bounds, Domain, Schema};
pub use event::{Event, EventBuilder, FrequencyCap, Value};
pub use expr::Constants;
pub use index::{Bulk, Id, Index, Scratch};
pub use parse::{CmpOp, SetOp};
pub use program::MAX_STEP_WEIGHT;

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum Error {
    /// The expression text is malformed.
    #[error("parse error at column {col}: expected {expected}, found {found}")]
    Parse {
        /// 1-based column (in characters) of the offending token.
        col: usize,
        /// What the parser expected there.
        expected: String,
        /// What it found.
        found: String,
    },
    /// The expression names an attribute the schema does not declare.
    #[error("unknown attribute `{name}` at column {col}")]
    UnknownAttribute {
        /// 1-based column.
        col: usize,
        /// The name as written.
        name: String,
    },
    /// The expression is well formed but does not fit the attribute types.
    #[error("type error at column {col}: {msg}")]
    Type {
        /// 1-based column.
        col: usize,
        /// What is wrong.
        msg: String,
    },
    /// A domain declaration or a domain bound is violated.
    #[error("domain error: {0}")]
    Domain(String),
    /// An event does not fit the schema.
    #[error("invalid event: {0}")]
    Event(String),
    /// A search was given an event lacking a disallow-undefined attribute.
    #[error("event lacks attribute `{0}`, which is declared disallow-undefined")]
    MissingAttribute(String),
    /// Insert of an id already stored.
    #[error("an expression with id {0} is already stored")]
    DuplicateId(Id),
    /// Delete of an id not stored.
    #[error("no expression with id {0} is stored")]
    UnknownId(Id),
    /// A reference-format file is malformed.
    #[error("{what} line {line}, column {col}: {msg}")]
    Format {
        /// Which input (`expression file`, `event file`, `domain file`).
        what: &'static str,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong.
        msg: String,
    },
    /// Reading an input failed (the I/O error's text, so that the enum
    /// stays `Clone` and `PartialEq`).
    #[error("reading failed: {0}")]
    Read(String),
    /// A search of an index whose bulk load was left unfinished: its
    /// [`Bulk`] was leaked (`mem::forget`), so some expressions are not
    /// posted yet. The next insert, delete or [`Index::bulk`] finishes
    /// the load.
    #[error(
        "the index has an unfinished bulk load (its Bulk was leaked); an insert, delete or bulk() finishes it"
    )]
    BulkUnfinished,
    /// A generated workload's parameters are out of range
    /// ([`workload::Shape::check`]).
    #[error("invalid workload shape: {0}")]
    Shape(String),
}

/// Result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
