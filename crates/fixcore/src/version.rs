//! [`BeginString`]: the FIX session protocol version, the one type the
//! builder writes, the settings read and the session checks.

/// Session-layer protocol version (BeginString(8)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BeginString {
    /// `FIX.4.0`
    Fix40,
    /// `FIX.4.1`
    Fix41,
    /// `FIX.4.2`
    Fix42,
    /// `FIX.4.3`
    Fix43,
    /// `FIX.4.4`
    Fix44,
    /// `FIXT.1.1` (FIX 5.0 application messages; the application version
    /// comes from DefaultApplVerID, or ApplVerID(1128) in the header).
    Fixt11,
}

impl BeginString {
    /// Reads the wire text, e.g. `FIX.4.4`.
    pub fn from_wire(s: &str) -> Option<BeginString> {
        Some(match s {
            "FIX.4.0" => BeginString::Fix40,
            "FIX.4.1" => BeginString::Fix41,
            "FIX.4.2" => BeginString::Fix42,
            "FIX.4.3" => BeginString::Fix43,
            "FIX.4.4" => BeginString::Fix44,
            "FIXT.1.1" => BeginString::Fixt11,
            _ => return None,
        })
    }

    /// The wire text as bytes, as a message carries it.
    pub fn as_bytes(self) -> &'static [u8] {
        self.as_str().as_bytes()
    }

    /// The wire text.
    pub fn as_str(self) -> &'static str {
        match self {
            BeginString::Fix40 => "FIX.4.0",
            BeginString::Fix41 => "FIX.4.1",
            BeginString::Fix42 => "FIX.4.2",
            BeginString::Fix43 => "FIX.4.3",
            BeginString::Fix44 => "FIX.4.4",
            BeginString::Fixt11 => "FIXT.1.1",
        }
    }
}
