//! The deferred comparison's baseline: the same hand-off as fixcore's SPSC
//! ring, over crossbeam's `ArrayQueue` of fixed-size messages.

use std::sync::Arc;

use crossbeam::queue::ArrayQueue;
use fixcore::deferred::InlineMsg;

/// Baseline hand-off: crossbeam `ArrayQueue<InlineMsg>`.
pub struct ArrayQueueSink {
    queue: Arc<ArrayQueue<InlineMsg>>,
}

impl ArrayQueueSink {
    /// A queue of `capacity` messages; returns the sink and a handle for the
    /// consumer.
    pub fn new(capacity: usize) -> (ArrayQueueSink, Arc<ArrayQueue<InlineMsg>>) {
        let q = Arc::new(ArrayQueue::new(capacity.max(1)));
        (ArrayQueueSink { queue: q.clone() }, q)
    }

    /// Copies `msg` into the queue; `false` if full or longer than
    /// [`fixcore::deferred::INLINE_MAX`] bytes.
    #[inline]
    pub fn try_submit(&self, msg: &[u8]) -> bool {
        InlineMsg::new(msg).is_some_and(|m| self.queue.push(m).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_queue_baseline_carries_bytes() {
        let (s, q) = ArrayQueueSink::new(2);
        assert!(s.try_submit(b"abc"));
        assert!(s.try_submit(b"de"));
        assert!(!s.try_submit(b"f"));
        assert_eq!(q.pop().unwrap().bytes(), b"abc");
        assert!(!s.try_submit(&[0; 257]));
    }
}
