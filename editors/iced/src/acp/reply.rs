//! A one-shot answer to a request the agent sent (permission, file read), carried in a
//! `Message` (which must be `Clone`) until the person or the editor state answers it.

use std::fmt;
use std::sync::{Arc, Mutex};

type Answer<T> = Box<dyn FnOnce(Result<T, String>) + Send>;

/// Answers one agent request exactly once; clones share the same answer slot.
pub struct Reply<T> {
    slot: Arc<Mutex<Option<Answer<T>>>>,
}

impl<T> Clone for Reply<T> {
    fn clone(&self) -> Self {
        Self {
            slot: Arc::clone(&self.slot),
        }
    }
}

impl<T> fmt::Debug for Reply<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pending = self.slot.lock().map(|s| s.is_some()).unwrap_or(false);
        f.debug_struct("Reply").field("pending", &pending).finish()
    }
}

impl<T> Reply<T> {
    /// A reply that hands the answer to `answer` (the SDK responder, or a test's channel).
    pub fn new(answer: impl FnOnce(Result<T, String>) + Send + 'static) -> Self {
        Self {
            slot: Arc::new(Mutex::new(Some(Box::new(answer)))),
        }
    }

    /// Sends the answer; false when it was already answered.
    pub fn send(&self, value: T) -> bool {
        self.finish(Ok(value))
    }

    /// Answers with an error; false when it was already answered.
    pub fn fail(&self, message: impl Into<String>) -> bool {
        self.finish(Err(message.into()))
    }

    /// True until answered.
    pub fn is_pending(&self) -> bool {
        self.slot.lock().map(|s| s.is_some()).unwrap_or(false)
    }

    fn finish(&self, result: Result<T, String>) -> bool {
        let answer = self.slot.lock().ok().and_then(|mut slot| slot.take());
        match answer {
            Some(answer) => {
                answer(result);
                true
            }
            None => false,
        }
    }
}
