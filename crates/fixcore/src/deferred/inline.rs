//! [`InlineMsg`]: a message carried by value, for the crossbeam
//! `ArrayQueue` baseline. Its one `unsafe` reads back the initialised
//! prefix.
//!
//! The bytes past the message are left uninitialised rather than zeroed, so
//! building an element copies only the message, as the SPSC ring does.
//! (`ArrayQueue::push` still moves the whole element into its slot: that
//! fixed-size move is part of what a by-value queue costs.) `perfkit
//! bench` times that baseline beside the SPSC ring; any by-value channel
//! carries one the same way:
//!
//! ```
//! use fixcore::deferred::{INLINE_MAX, InlineMsg};
//!
//! let (tx, rx) = std::sync::mpsc::sync_channel::<InlineMsg>(16);
//! tx.send(InlineMsg::new(b"8=FIX.4.4\x019=5\x0135=0\x01").unwrap()).unwrap();
//! assert_eq!(rx.recv().unwrap().bytes(), b"8=FIX.4.4\x019=5\x0135=0\x01");
//! // Too long to carry by value: the caller sends it another way.
//! assert!(InlineMsg::new(&[0; INLINE_MAX + 1]).is_none());
//! ```

use std::mem::MaybeUninit;

/// Largest message an [`InlineMsg`] carries.
pub const INLINE_MAX: usize = 256;

/// A message copied by value into a queue element.
#[derive(Clone, Copy)]
pub struct InlineMsg {
    /// Invariant: `len <= INLINE_MAX` and `bytes[..len]` is initialised.
    len: u16,
    bytes: [MaybeUninit<u8>; INLINE_MAX],
}

impl InlineMsg {
    /// A copy of `msg`; `None` if it is longer than [`INLINE_MAX`].
    #[inline]
    pub fn new(msg: &[u8]) -> Option<InlineMsg> {
        if msg.len() > INLINE_MAX {
            return None;
        }
        let mut m = InlineMsg {
            len: msg.len() as u16,
            bytes: [MaybeUninit::uninit(); INLINE_MAX],
        };
        m.bytes[..msg.len()].write_copy_of_slice(msg);
        Some(m)
    }

    /// The carried bytes.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        let init = &self.bytes[..usize::from(self.len)];
        // SAFETY: `new` initialised exactly `bytes[..len]` (the struct's
        // invariant; the fields are private and nothing else writes them).
        unsafe { init.assume_init_ref() }
    }
}

impl std::fmt::Debug for InlineMsg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InlineMsg")
            .field("bytes", &self.bytes())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carries_exactly_the_message() {
        for len in [0, 1, 100, INLINE_MAX] {
            let msg: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let m = InlineMsg::new(&msg).unwrap();
            let copy = m;
            assert_eq!(copy.bytes(), msg.as_slice());
        }
        assert!(InlineMsg::new(&[0; INLINE_MAX + 1]).is_none());
    }
}
