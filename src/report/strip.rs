//! The extent-map strip of one file as SVG (placeholder until it lands).
