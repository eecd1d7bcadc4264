//! Renderers: turn layout and run results into pictures and pages. Each
//! renderer returns bytes; the caller decides where they go.

pub mod axis;
pub mod bars;
pub mod html;
mod markup;
pub mod strip;
pub mod timeline;
