package io.github.ratelimit.benchmarks.redis;

import java.lang.management.ManagementFactory;

/**
 * CPU time of this JVM (all threads, user and system), or -1 where the platform does not report it.
 */
final class ProcessCpu {

    private ProcessCpu() {}

    static long nanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }
}
