//! A bare-metal program (thumbv7em-none-eabihf: Cortex-M4F/M7F) that parses a model's reply the
//! way a microcontroller reading a serial line would: bytes arrive in small chunks, the text lives
//! in a fixed buffer, blocks in fixed capacities, and there is no allocator at all.
//!
//! Build: `cargo build --release --target thumbv7em-none-eabihf` in this folder.
#![no_std]
#![no_main]

use core::panic::PanicInfo;
use core::ptr::addr_of_mut;

use parser_core::fixed::{self, Storage, StreamParser};
use parser_core::{Block, Grammar, RawBlock, RawParam};

// The per-block and per-param costs the README documents for 32-bit targets.
const _: () = assert!(core::mem::size_of::<RawBlock>() == 24);
const _: () = assert!(core::mem::size_of::<RawParam>() == 32);

const REPLY: &[u8] = b"Reading the sensor config.<read_file><path>cfg/sensor.toml</path></read_file>";

/// What the parse found, written where a debugger (or the test harness of a board) can read it.
#[no_mangle]
static mut RESULT: [usize; 4] = [0; 4];

static mut TEXT: [u8; 512] = [0; 512];
static mut STORAGE: Storage<4, 8> = Storage::new();

#[no_mangle]
pub extern "C" fn _start() -> ! {
    // SAFETY: single-threaded bare metal with no interrupts touching TEXT; this is its only borrow.
    let buf: &mut [u8] = unsafe { &mut *addr_of_mut!(TEXT) };
    let mut parser = StreamParser::<4, 8>::new(buf);
    let mut errors = 0;
    for chunk in REPLY.chunks(5) {
        // As if each chunk came off a UART FIFO.
        if parser.push_bytes(chunk).is_err() {
            errors += 1;
        }
    }
    let mut path_len = 0;
    let mut tools = 0;
    if let Ok(blocks) = parser.finish() {
        for b in blocks {
            if let Block::ToolUse(t) = b {
                tools += 1;
                path_len = t.param("path").map_or(0, str::len);
            }
        }
    }
    // SAFETY: as for TEXT: single-threaded, the only borrow of STORAGE.
    let storage = unsafe { &mut *addr_of_mut!(STORAGE) };
    let reply = core::str::from_utf8(REPLY).unwrap_or("");
    let whole = fixed::parse_into(reply, storage, Grammar::cline()).map_or(0, |b| b.len());
    let result = [tools, path_len, whole, errors];
    // SAFETY: single-threaded; a volatile write keeps the result observable.
    unsafe { addr_of_mut!(RESULT).write_volatile(result) };
    loop {
        core::hint::spin_loop();
    }
}

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    loop {
        core::hint::spin_loop();
    }
}
