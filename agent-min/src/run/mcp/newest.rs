//! The messages a server sent that no request has taken yet, bounded: the newest of them, at
//! most a number and [`MAX_BODY`] bytes together (the newest one always kept). A server that
//! sends without end, or answers each of our answers with more requests, cannot fill the
//! memory. Used by the SSE and streamable HTTP transports.

use std::collections::VecDeque;

use super::http::MAX_BODY;

/// A queue that lets its oldest items go beyond its bounds.
#[derive(Debug)]
pub(crate) struct Newest<T> {
    /// Each item with the bytes of its text.
    items: VecDeque<(T, usize)>,
    /// The bytes of `items`.
    bytes: usize,
    /// The most items kept.
    most: usize,
}

impl<T> Newest<T> {
    /// An empty queue of at most `most` items.
    pub(crate) fn new(most: usize) -> Self {
        Newest { items: VecDeque::new(), bytes: 0, most }
    }

    /// Adds `item` of `bytes` bytes of text, letting the oldest go beyond the bounds.
    pub(crate) fn push(&mut self, item: T, bytes: usize) {
        self.items.push_back((item, bytes));
        self.bytes += bytes;
        while self.items.len() > 1 && (self.items.len() > self.most || self.bytes > MAX_BODY) {
            if let Some((_, b)) = self.items.pop_front() {
                self.bytes -= b;
            }
        }
    }

    /// The oldest item kept.
    pub(crate) fn pop(&mut self) -> Option<T> {
        let (item, bytes) = self.items.pop_front()?;
        self.bytes -= bytes;
        Some(item)
    }

    /// How many items are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// The newest item kept.
    #[cfg(test)]
    pub(crate) fn newest(&self) -> Option<&T> {
        self.items.back().map(|(item, _)| item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_are_kept_within_the_count_and_the_bytes() {
        let mut q = Newest::new(3);
        for i in 0..10 {
            q.push(i, 10);
        }
        assert_eq!((q.len(), q.newest(), q.bytes), (3, Some(&9), 30));
        assert_eq!(q.bytes, q.items.iter().map(|(_, b)| b).sum::<usize>());
        // Past MAX_BODY bytes only the newest stays, however large.
        q.push(10, MAX_BODY);
        q.push(11, MAX_BODY + 1);
        assert_eq!((q.len(), q.newest(), q.bytes), (1, Some(&11), MAX_BODY + 1));
        assert_eq!((q.pop(), q.pop(), q.bytes), (Some(11), None, 0));
    }
}
