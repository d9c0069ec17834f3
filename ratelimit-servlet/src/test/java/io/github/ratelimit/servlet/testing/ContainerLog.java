package io.github.ratelimit.servlet.testing;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/** What Tomcat logs while a web application fails to start: the messages of the errors it logged. */
public final class ContainerLog {

    private ContainerLog() {}

    /**
     * @param start starts a server whose web application must fail to start ({@link TomcatServer.Builder#start}
     *     then throws)
     * @return the messages of the errors Tomcat logged meanwhile (a filter's {@code init} failure among them)
     */
    public static List<String> deploymentFailures(ThrowingCallable start) {
        List<String> logged = new CopyOnWriteArrayList<>();
        Logger catalina = Logger.getLogger("org.apache.catalina");
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getThrown() != null) {
                    logged.add(record.getThrown().getMessage());
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        catalina.addHandler(capture);
        try {
            assertThatThrownBy(start).hasMessageContaining("failed to start");
        } finally {
            catalina.removeHandler(capture);
        }
        return logged;
    }
}
