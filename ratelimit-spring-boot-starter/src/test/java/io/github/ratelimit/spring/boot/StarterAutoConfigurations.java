package io.github.ratelimit.spring.boot;

import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.util.ClassUtils;

/**
 * The starter's auto-configurations as Boot finds them (its {@code AutoConfiguration.imports} file), for context
 * runners: a test runs what an application gets, not a list of classes kept by hand.
 */
public final class StarterAutoConfigurations {

    private StarterAutoConfigurations() {}

    /**
     * @param others Boot's own auto-configurations the test needs too
     * @return the starter's auto-configurations and those
     */
    public static AutoConfigurations of(Class<?>... others) {
        ClassLoader loader = StarterAutoConfigurations.class.getClassLoader();
        List<Class<?>> classes = new ArrayList<>(List.of(others));
        for (String name : ImportCandidates.load(AutoConfiguration.class, loader)) {
            if (name.startsWith("io.github.ratelimit.")) {
                classes.add(ClassUtils.resolveClassName(name, loader));
            }
        }
        if (classes.size() == others.length) {
            throw new IllegalStateException("no auto-configuration of the starter in AutoConfiguration.imports");
        }
        return AutoConfigurations.of(classes.toArray(Class<?>[]::new));
    }
}
