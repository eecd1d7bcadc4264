//! Renderers: turn layout and run results into pictures and pages. Each
//! renderer returns bytes; the caller decides where they go.
//!
//! They read the results model (`record`) and a `Catalog` handed to them,
//! never the code that measures (`scenario`, `probe`, `layout`, `sys`,
//! `site`, `ledger`): what they need to know about scenarios and figures comes as
//! data, so they are tested on hand-made records and catalogs, and the
//! measuring side changes without touching them.

pub mod axis;
pub mod bars;
pub mod history;
pub mod html;
pub mod hunt;
mod markup;
pub mod seekwatch;
pub mod strip;
pub mod survey;
pub mod timeline;
