//! The runtime's original function of every slot of the core and
//! AMD-extension tables, as the wrappers' `install` found them.
//!
//! Below both of their users: the wrappers ([`crate::hsa::wrap`]) save the
//! originals here and forward to them, and the tool's own calls
//! ([`crate::hsa::rt`]) go straight to them, untraced. `generated.rs` (the
//! same list the wrappers are made from) gives, per table, a module with
//!
//! - `SAVED`: the runtime's original function of every slot,
//! - `slot::<name>`: slot numbers by function name, and `NAMES`,
//! - `original(slot)`: the saved function (null when absent).

use std::ffi::c_void;

macro_rules! hsa_tables {
    ($(
        $table:ident {
            $($slot:literal fn $name:ident($($arg:ident: $ty:ty = $cty:literal),* $(,)?) -> $ret:ty = $cret:literal;)*
        }
    )*) => {$(
        #[doc = concat!(
            "The HSA `", stringify!($table), "` table: the runtime's original function ",
            "of each slot, slot numbers and names."
        )]
        #[allow(non_upper_case_globals)]
        pub mod $table {
            use super::*;
            use std::sync::atomic::{AtomicPtr, Ordering};

            /// Highest slot number this layout knows.
            pub const SLOTS: usize = { let mut n = 0; $( if $slot > n { n = $slot; } )* n };

            /// The runtime's original functions, by slot.
            pub static SAVED: [AtomicPtr<c_void>; SLOTS + 1] =
                [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS + 1];

            /// Slot numbers by function name.
            pub mod slot {
                $(
                    #[doc = concat!("`", stringify!($name), "`: slot ", $slot, ".")]
                    pub const $name: usize = $slot;
                )*
            }

            /// Every slot of the layout: (slot, function name).
            pub const NAMES: &[(usize, &str)] = &[$(($slot, stringify!($name))),*];

            /// The original function of `slot` (null when absent).
            #[inline]
            pub fn original(slot: usize) -> *mut c_void {
                SAVED.get(slot).map_or(std::ptr::null_mut(), |p| p.load(Ordering::Acquire))
            }
        }
    )*};
}

include!("generated.rs");
