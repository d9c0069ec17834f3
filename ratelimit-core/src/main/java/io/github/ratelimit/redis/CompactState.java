package io.github.ratelimit.redis;

import io.github.bucket4j.distributed.remote.RemoteBucketState;
import io.github.bucket4j.distributed.serialization.DeserializationAdapter;
import io.github.bucket4j.distributed.serialization.InternalSerializationHelper;
import io.github.bucket4j.distributed.serialization.Scope;
import io.github.bucket4j.distributed.serialization.SerializationAdapter;
import io.github.bucket4j.distributed.versioning.Version;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * How a token bucket's state is stored in Redis: Bucket4j's own fields, in Bucket4j's own order (its serialization
 * handles walk the state), but each number as a variable-length integer instead of a fixed four or eight bytes.
 * Capacities, periods and token counts are small, so a typical two-limit bucket takes about half of Bucket4j's
 * binary format; the configuration stays inside, so a configuration change replaces the stored one exactly as
 * before.
 *
 * <p>The first byte, {@link #FORMAT}, tells the two apart: Bucket4j's format begins with a four-byte version number,
 * whose first byte is 0. {@link #decode} reads both, so keys written before this format (or by an older instance
 * during a rolling upgrade) are read, and rewritten in this format by the next decision; an older instance that
 * meets this format treats it as unreadable and starts the bucket again, once.
 *
 * <p>Encoding is deterministic, which the compare-and-set script relies on: the same state gives the same bytes.
 */
final class CompactState {

    /** The first byte of this format. */
    static final byte FORMAT = (byte) 0xC5;

    private CompactState() {}

    /**
     * @param state a bucket's state
     * @param version the Bucket4j serialization version the request asked for
     * @return its bytes in this format
     */
    static byte[] encode(RemoteBucketState state, Version version) {
        ByteSink out = new ByteSink();
        out.bytes[out.size++] = FORMAT;
        try {
            RemoteBucketState.SERIALIZATION_HANDLE.serialize(WRITER, out, state, version, Scope.PERSISTED_STATE);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // writing to memory does not fail
        }
        return Arrays.copyOf(out.bytes, out.size);
    }

    /**
     * @param bytes a stored state in this format or Bucket4j's
     * @return the state
     * @throws RuntimeException when the bytes are neither (the caller replaces such a state)
     */
    static RemoteBucketState decode(byte[] bytes) {
        if (bytes.length == 0 || bytes[0] != FORMAT) {
            return InternalSerializationHelper.deserializeState(bytes);
        }
        ByteSource in = new ByteSource(bytes);
        try {
            RemoteBucketState state = RemoteBucketState.SERIALIZATION_HANDLE.deserialize(READER, in);
            if (in.position != bytes.length) {
                throw new IllegalArgumentException((bytes.length - in.position) + " bytes left after the state");
            }
            return state;
        } catch (IOException e) {
            throw new IllegalArgumentException("unreadable bucket state: " + e.getMessage(), e);
        }
    }

    /** Where a state is written: a growable byte array. */
    private static final class ByteSink {
        byte[] bytes = new byte[96];
        int size;

        void put(int b) {
            if (size == bytes.length) {
                bytes = Arrays.copyOf(bytes, size * 2);
            }
            bytes[size++] = (byte) b;
        }

        void varint(long zigzagged) {
            long v = zigzagged;
            while ((v & ~0x7FL) != 0) {
                put((int) ((v & 0x7F) | 0x80));
                v >>>= 7;
            }
            put((int) v);
        }
    }

    /** Where a state is read from: the stored bytes, after the format byte. */
    private static final class ByteSource {
        final byte[] bytes;
        int position = 1;

        ByteSource(byte[] bytes) {
            this.bytes = bytes;
        }

        int next() throws EOFException {
            if (position >= bytes.length) {
                throw new EOFException("the state ends early");
            }
            return bytes[position++] & 0xFF;
        }

        long varint() throws IOException {
            long result = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                int b = next();
                result |= (long) (b & 0x7F) << shift;
                if ((b & 0x80) == 0) {
                    return result;
                }
            }
            throw new IOException("a number longer than ten bytes");
        }

        int length() throws IOException {
            long n = varint();
            if (n < 0 || n > bytes.length - position) {
                throw new IOException("a length of " + n + " beyond the state's end");
            }
            return (int) n;
        }
    }

    private static long zigzag(long v) {
        return (v << 1) ^ (v >> 63);
    }

    private static long unzigzag(long v) {
        return (v >>> 1) ^ -(v & 1);
    }

    private static final SerializationAdapter<ByteSink> WRITER = new SerializationAdapter<>() {
        @Override
        public void writeBoolean(ByteSink out, boolean value) {
            out.put(value ? 1 : 0);
        }

        @Override
        public void writeByte(ByteSink out, byte value) {
            out.put(value);
        }

        @Override
        public void writeInt(ByteSink out, int value) {
            out.varint(zigzag(value));
        }

        @Override
        public void writeLong(ByteSink out, long value) {
            out.varint(zigzag(value));
        }

        @Override
        public void writeLongArray(ByteSink out, long[] values) {
            out.varint(values.length);
            for (long v : values) {
                out.varint(zigzag(v));
            }
        }

        @Override
        public void writeDoubleArray(ByteSink out, double[] values) {
            out.varint(values.length);
            for (double v : values) {
                out.varint(Double.doubleToRawLongBits(v));
            }
        }

        @Override
        public void writeString(ByteSink out, String value) {
            byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
            out.varint(utf8.length);
            for (byte b : utf8) {
                out.put(b);
            }
        }
    };

    private static final DeserializationAdapter<ByteSource> READER = new DeserializationAdapter<>() {
        @Override
        public boolean readBoolean(ByteSource in) throws IOException {
            int b = in.next();
            if (b > 1) {
                throw new IOException("a boolean of " + b);
            }
            return b == 1;
        }

        @Override
        public byte readByte(ByteSource in) throws IOException {
            return (byte) in.next();
        }

        @Override
        public int readInt(ByteSource in) throws IOException {
            long v = unzigzag(in.varint());
            if (v != (int) v) {
                throw new IOException("an int of " + v);
            }
            return (int) v;
        }

        @Override
        public long readLong(ByteSource in) throws IOException {
            return unzigzag(in.varint());
        }

        @Override
        public long[] readLongArray(ByteSource in) throws IOException {
            long[] values = new long[in.length()];
            for (int i = 0; i < values.length; i++) {
                values[i] = unzigzag(in.varint());
            }
            return values;
        }

        @Override
        public double[] readDoubleArray(ByteSource in) throws IOException {
            double[] values = new double[in.length()];
            for (int i = 0; i < values.length; i++) {
                values[i] = Double.longBitsToDouble(in.varint());
            }
            return values;
        }

        @Override
        public String readString(ByteSource in) throws IOException {
            int n = in.length();
            String s = new String(in.bytes, in.position, n, StandardCharsets.UTF_8);
            in.position += n;
            return s;
        }
    };
}
