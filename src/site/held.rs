//! What one target holds in the run's ledger: the tokens of what it made,
//! released newest first when the target is released or dropped, and the
//! descriptors that keep what it made alive (its loop device).

use std::fs::File;

use crate::ledger::{Ledger, Resource, Token};
use crate::ledger::proof::Proof;
use crate::error::Result;

/// The ledger entries of one target.
#[derive(Debug)]
pub(super) struct Held<'l> {
    pub(super) ledger: &'l Ledger,
    tokens: Vec<Token>,
    open: Vec<File>,
}

impl<'l> Held<'l> {
    /// Nothing held yet.
    pub(super) fn new(ledger: &'l Ledger) -> Held<'l> {
        Held { ledger, tokens: Vec::new(), open: Vec::new() }
    }

    /// Write `resource` into the ledger before it is made.
    pub(super) fn record(&mut self, resource: Resource) -> Result<Token> {
        let token = self.ledger.record(resource)?;
        self.tokens.push(token);
        Ok(token)
    }

    /// Write down what the resource of `token` is, once made.
    pub(super) fn prove(&mut self, token: Token, proof: Proof) -> Result<()> {
        self.ledger.prove(token, proof)
    }

    /// Keep `file` open until the release starts (a loop device set to
    /// detach on its last close).
    pub(super) fn keep_open(&mut self, file: File) {
        self.open.push(file);
    }

    /// The entry recorded last.
    pub(super) fn newest(&self) -> Token {
        *self.tokens.last().expect("something recorded")
    }

    /// Close what [`keep_open`](Held::keep_open) kept (a loop device then
    /// detaches itself).
    pub(super) fn close_open(&mut self) {
        self.open.clear();
    }

    /// Release one resource now, out of turn (the caller knows nothing
    /// made after it still needs it); what fails stays held.
    pub(super) fn release_one(&mut self, token: Token) -> Result<()> {
        self.ledger.release(token)?;
        self.tokens.retain(|t| *t != token);
        Ok(())
    }

    /// Keep one resource after the target is released: written down as
    /// done, never touched (`Ledger::keep`).
    pub(super) fn keep(&mut self, token: Token) -> Result<()> {
        self.ledger.keep(token)?;
        self.tokens.retain(|t| *t != token);
        Ok(())
    }

    /// Leave everything it holds to the ledger's release at the run's end
    /// (something made through a target's steps that lives as long as the
    /// run: the reflink pool), closing what it kept open.
    pub(super) fn hand_over(&mut self) {
        self.open.clear();
        self.tokens.clear();
    }

    /// Release everything, newest first; what fails stays in the ledger.
    pub(super) fn release(&mut self) -> Result<()> {
        self.open.clear();
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
