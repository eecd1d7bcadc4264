//! What one target holds in the run's ledger: the tokens of what it made,
//! released newest first when the target is released or dropped.

use super::ledger::{Ledger, Resource, Token};
use crate::error::Result;

/// The ledger entries of one target.
#[derive(Debug)]
pub(super) struct Held<'l> {
    pub(super) ledger: &'l Ledger,
    tokens: Vec<Token>,
}

impl<'l> Held<'l> {
    /// Nothing held yet.
    pub(super) fn new(ledger: &'l Ledger) -> Held<'l> {
        Held { ledger, tokens: Vec::new() }
    }

    /// Write `resource` into the ledger before it is made.
    pub(super) fn record(&mut self, resource: Resource) -> Result<()> {
        let token = self.ledger.record(resource)?;
        self.tokens.push(token);
        Ok(())
    }

    /// Release everything, newest first; what fails stays in the ledger.
    pub(super) fn release(&mut self) -> Result<()> {
        while let Some(token) = self.tokens.last().copied() {
            self.ledger.release(token)?;
            self.tokens.pop();
        }
        Ok(())
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        // An error path: give back what this target holds now rather than at
        // the end of the run. What fails stays in the ledger for later.
        let _ = self.release();
    }
}
