//! Names as they are shown: entry names and file names come from archives
//! and file systems, and a newline, carriage return or ESC in one would
//! spoof a listing or send codes to the terminal. Every place the binary
//! prints such a name (listings, progress, error messages) goes through
//! [`name`].

pub use zipstream::listing::printable_name as name;
