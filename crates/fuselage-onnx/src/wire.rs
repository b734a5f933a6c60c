//! The protobuf wire format, as far as fuselage walks it itself: varints, tags and
//! length-delimited fields. [`metadata`](crate::metadata) rewrites node metadata with it and
//! `slim.rs` reads a model without its weights; both copy every field they do not
//! touch byte for byte, which a decode and re-encode through generated types would not.

/// Wire types of the protobuf encoding.
pub(crate) const VARINT: u64 = 0;
pub(crate) const FIXED64: u64 = 1;
pub(crate) const LEN: u64 = 2;
pub(crate) const FIXED32: u64 = 5;

/// One field of a message: its number, wire type, and the bytes of the whole field (tag
/// included) and of its payload.
pub(crate) struct Field<'a> {
    pub(crate) number: u64,
    pub(crate) wire: u64,
    pub(crate) whole: &'a [u8],
    pub(crate) payload: &'a [u8],
}

pub(crate) fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn put_len(out: &mut Vec<u8>, number: u64, payload: &[u8]) {
    put_varint(out, number << 3 | LEN);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// The fields of one message, or `None` when the bytes are not a well-formed message.
pub(crate) fn fields(bytes: &[u8]) -> Option<Vec<Field<'_>>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let tag = varint(bytes, &mut at)?;
        let (number, wire) = (tag >> 3, tag & 7);
        let payload_start;
        match wire {
            VARINT => {
                payload_start = at;
                varint(bytes, &mut at)?;
            }
            FIXED64 => {
                payload_start = at;
                at = at.checked_add(8)?;
            }
            FIXED32 => {
                payload_start = at;
                at = at.checked_add(4)?;
            }
            LEN => {
                let len = usize::try_from(varint(bytes, &mut at)?).ok()?;
                payload_start = at;
                at = at.checked_add(len)?;
            }
            _ => return None,
        }
        if at > bytes.len() || number == 0 {
            return None;
        }
        out.push(Field {
            number,
            wire,
            whole: &bytes[start..at],
            payload: &bytes[payload_start..at],
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            let mut at = 0;
            assert_eq!(varint(&b, &mut at), Some(v));
            assert_eq!(at, b.len());
        }
    }
}
