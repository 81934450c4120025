//! Bolt message framing: messages travel as chunks.
//!
//! ```text
//!   message  = chunk+ end
//!   chunk    = size:u16be (1..=65535) bytes[size]
//!   end      = 00 00
//!   noop     = 00 00          (between messages: a keep-alive, ignored)
//! ```
//!
//! A message's size is only known once its end marker arrives, so the reader adds chunk sizes
//! as they come and gives up as soon as the sum passes the configured
//! `max_message_size_bytes`, before reading the chunk that would pass it: a client cannot
//! make the server buffer more than that per connection. Outgoing messages are split into
//! chunks of at most [`MAX_CHUNK_SIZE_BYTES`].

use std::fmt;
use std::io;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Largest chunk the u16 size field can announce.
pub const MAX_CHUNK_SIZE_BYTES: usize = u16::MAX as usize;

#[derive(Debug)]
pub enum FrameError {
    Io(io::Error),
    /// The connection closed inside a message.
    ClosedMidMessage,
    /// The message grew past the limit (the size it would have reached, the limit).
    TooLarge {
        size_bytes: usize,
        max_bytes: usize,
    },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Io(e) => write!(f, "read failed: {e}"),
            FrameError::ClosedMidMessage => write!(f, "connection closed inside a message"),
            FrameError::TooLarge {
                size_bytes,
                max_bytes,
            } => write!(
                f,
                "message of at least {size_bytes} bytes exceeds the limit of {max_bytes} bytes"
            ),
        }
    }
}

impl std::error::Error for FrameError {}

/// Reads the next message; `Ok(None)` when the peer closed the connection between messages.
pub async fn read_message<R: AsyncRead + Unpin>(
    reader: &mut R,
    max_message_size_bytes: usize,
) -> Result<Option<Vec<u8>>, FrameError> {
    let mut message = Vec::new();
    loop {
        let mut size = [0u8; 2];
        match reader.read_exact(&mut size).await {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return if message.is_empty() {
                    Ok(None)
                } else {
                    Err(FrameError::ClosedMidMessage)
                };
            }
            Err(e) => return Err(FrameError::Io(e)),
        }
        let size = u16::from_be_bytes(size) as usize;
        if size == 0 {
            if message.is_empty() {
                continue; // a NOOP chunk
            }
            return Ok(Some(message));
        }
        let total = message.len() + size;
        if total > max_message_size_bytes {
            return Err(FrameError::TooLarge {
                size_bytes: total,
                max_bytes: max_message_size_bytes,
            });
        }
        let start = message.len();
        message.resize(total, 0);
        reader
            .read_exact(&mut message[start..])
            .await
            .map_err(|e| match e.kind() {
                io::ErrorKind::UnexpectedEof => FrameError::ClosedMidMessage,
                _ => FrameError::Io(e),
            })?;
    }
}

/// Appends `message` to `out` as chunks followed by the end marker.
pub fn write_message(message: &[u8], out: &mut Vec<u8>) {
    for chunk in message.chunks(MAX_CHUNK_SIZE_BYTES) {
        out.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&[0, 0]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn read_all(bytes: &[u8], max: usize) -> Vec<Result<Option<Vec<u8>>, String>> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let mut reader = bytes;
            let mut out = Vec::new();
            loop {
                let next = read_message(&mut reader, max).await;
                let stop = !matches!(next, Ok(Some(_)));
                out.push(next.map_err(|e| e.to_string()));
                if stop {
                    return out;
                }
            }
        })
    }

    #[test]
    fn messages_split_into_chunks_and_join_again() {
        let big = vec![9u8; 2 * MAX_CHUNK_SIZE_BYTES + 10];
        let mut wire = vec![0, 0]; // a NOOP before the first message
        write_message(b"hello", &mut wire);
        write_message(&big, &mut wire);
        assert_eq!(wire.len(), 2 + (2 + 5 + 2) + (3 * 2 + big.len() + 2));
        let got = read_all(&wire, 1 << 20);
        assert_eq!(
            got,
            vec![Ok(Some(b"hello".to_vec())), Ok(Some(big)), Ok(None)]
        );
    }

    #[test]
    fn oversized_and_truncated_messages_are_errors() {
        let mut wire = Vec::new();
        write_message(&[1; 100], &mut wire);
        let got = read_all(&wire, 99);
        assert!(matches!(&got[..], [Err(e)] if e.contains("exceeds")));
        let got = read_all(&wire[..50], 1000);
        assert!(matches!(&got[..], [Err(e)] if e.contains("inside a message")));
        let got = read_all(&wire[..wire.len() - 1], 1000);
        assert!(matches!(&got[..], [Err(e)] if e.contains("inside a message")));
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = read_all(&bytes, 256);
        }
    }
}
