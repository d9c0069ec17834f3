package io.github.ratelimit.benchmarks.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The benchmark's own Lua scripts, read from the class path next to this class.
 */
final class LuaSources {

    private LuaSources() {}

    /**
     * @param name the file name, e.g. {@code gcra.lua}
     * @return its text
     * @throws IllegalStateException when the file is not on the class path
     */
    static String read(String name) {
        try (InputStream in = LuaSources.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(name + " is missing from the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + name, e);
        }
    }
}
