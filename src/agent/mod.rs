//! The agent layer: everything that talks to model providers over the network. For now the
//! embedding providers the semantic index can use instead of the built-in model.
//!
//! Invariants:
//! - This is the lowest layer that touches the network; layers below receive what it makes
//!   through traits (`vector::Embedder`).
//! - Secrets are read from environment variables named in settings, never stored.

pub mod providers;
