package io.github.ratelimit.servlet;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.MapLimitProvider;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.internal.web.Phase;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.key.NamedKeyResolver;
import io.github.ratelimit.store.BucketStore;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Reads the filter's configuration: {@code ratelimit.*} properties, the same names the Spring Boot starter binds,
 * from a {@code .properties} rules file overlaid with {@code ratelimit.*} context and filter init-params. The
 * settings themselves are read and checked by {@link RateLimitSettings}, the model the starter uses too; this class
 * adds what only a rules file has: {@code ${NAME}} and {@code ${NAME:default}} placeholders (system properties, then
 * environment variables), classes named by their class name, and Micrometer's global registry. Everything happens in
 * {@code init}: a bad file fails deployment with a message that names the property.
 */
final class RulesFile {

    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([A-Za-z0-9_.\\-]+)(?::([^}]*))?}");

    /** What the file configures. */
    record Settings(
            boolean enabled,
            RateLimiter limiter,
            List<UrlRule> rules,
            Set<HeaderStyle> headers,
            RejectionHandler rejectionHandler,
            boolean annotations,
            boolean trustContainerForwarding,
            MapLimitProvider keyLimits,
            LimitProvider limitStore,
            List<String> planRules,
            String planFrom,
            BucketStore store) {}

    private RulesFile() {}

    /**
     * Reads the rules file at {@code location} and overlays the {@code ratelimit.*} context-params, then the
     * filter's own {@code ratelimit.*} init-params.
     *
     * @param config the filter's configuration
     * @param location a path in the web application ({@code /WEB-INF/...}), {@code classpath:...} or {@code file:...}
     * @return the merged properties
     * @throws InvalidRateLimitConfigurationException when the file does not exist or cannot be read
     */
    static Map<String, String> read(FilterConfig config, String location) {
        Map<String, String> properties = new HashMap<>(readRulesFile(config.getServletContext(), location));
        overlay(
                properties,
                Collections.list(config.getServletContext().getInitParameterNames()),
                config.getServletContext()::getInitParameter);
        overlay(properties, Collections.list(config.getInitParameterNames()), config::getInitParameter);
        return properties;
    }

    private static void overlay(Map<String, String> properties, List<String> names, Function<String, String> value) {
        for (String n : names) {
            if (n.startsWith("ratelimit.")) {
                properties.put(n, value.apply(n));
            }
        }
    }

    private static Map<String, String> readRulesFile(ServletContext context, String location) {
        Properties properties = new Properties();
        try (InputStream in = open(context, location)) {
            if (in == null) {
                throw new InvalidRateLimitConfigurationException("rules file '" + location + "' does not exist. Give "
                        + "the 'config' init-param a path in the web application (/WEB-INF/ratelimit.properties), "
                        + "classpath:... or file:....");
            }
            try (Reader reader = new InputStreamReader(in, StandardCharsets.UTF_8)) {
                properties.load(reader);
            }
        } catch (IOException | IllegalArgumentException e) {
            if (e instanceof InvalidRateLimitConfigurationException i) {
                throw i;
            }
            throw new InvalidRateLimitConfigurationException(
                    "rules file '" + location + "' cannot be read: " + e + ". It must be a Java .properties file.", e);
        }
        Map<String, String> map = new HashMap<>();
        properties.stringPropertyNames().forEach(k -> map.put(k, properties.getProperty(k)));
        return map;
    }

    private static @Nullable InputStream open(ServletContext context, String location) throws IOException {
        if (location.startsWith("classpath:")) {
            String resource = location.substring("classpath:".length());
            resource = resource.startsWith("/") ? resource.substring(1) : resource;
            return context.getClassLoader().getResourceAsStream(resource);
        }
        if (location.startsWith("file:")) {
            Path path = Path.of(location.substring("file:".length()));
            return Files.exists(path) ? Files.newInputStream(path) : null;
        }
        return context.getResourceAsStream(location.startsWith("/") ? location : "/" + location);
    }

    /**
     * @param properties the merged {@code ratelimit.*} properties
     * @param source where they come from, for messages (e.g. {@code /WEB-INF/ratelimit.properties})
     * @param classLoader loads custom key resolvers and the rejection handler
     * @return the settings, with a built limiter (which owns its store)
     * @throws InvalidRateLimitConfigurationException naming the property, the value and the fix
     */
    static Settings parse(Map<String, String> properties, String source, ClassLoader classLoader) {
        return parse(properties, source, classLoader, decision -> {});
    }

    /**
     * @param properties the merged {@code ratelimit.*} properties
     * @param source where they come from, for messages (e.g. {@code /WEB-INF/ratelimit.properties})
     * @param classLoader loads custom key resolvers and the rejection handler
     * @param listener receives every decision of the limiter (the application's most-rejected keys)
     * @return the settings, with a built limiter (which owns its store)
     * @throws InvalidRateLimitConfigurationException naming the property, the value and the fix
     */
    static Settings parse(
            Map<String, String> properties, String source, ClassLoader classLoader, RateLimiter.Listener listener) {
        return parse(properties, source, classLoader, listener, null);
    }

    /**
     * @param properties the merged {@code ratelimit.*} properties
     * @param source where they come from, for messages (e.g. {@code /WEB-INF/ratelimit.properties})
     * @param classLoader loads custom key resolvers and the rejection handler
     * @param listener receives every decision of the limiter (the application's most-rejected keys)
     * @param observer told of each decision as it starts and ends (the application's observations), or {@code null}
     * @return the settings, with a built limiter (which owns its store)
     * @throws InvalidRateLimitConfigurationException naming the property, the value and the fix
     */
    static Settings parse(
            Map<String, String> properties,
            String source,
            ClassLoader classLoader,
            RateLimiter.Listener listener,
            RateLimiter.@Nullable Observer observer) {
        Map<String, String> resolved = new TreeMap<>();
        properties.forEach((k, v) -> {
            if (k.startsWith("ratelimit.")) {
                resolved.put(k.trim(), resolvePlaceholders(v == null ? "" : v.trim(), k, source));
            }
        });
        RateLimitSettings settings =
                RateLimitSettings.parse(resolved, source, RateLimitSettings.EntryPoint.SERVLET_FILTER);
        RejectionHandler handler = settings.rejectionHandler() == null
                ? new ProblemDetailsRejectionHandler(settings.rejectStatus())
                : instantiate(
                        "ratelimit.rejection-handler",
                        settings.rejectionHandler(),
                        RejectionHandler.class,
                        classLoader,
                        source);
        RateLimiter.Builder builder = settings.applyTo(RateLimiter.builder());
        for (NamedKeyResolver resolver : ServiceLoader.load(NamedKeyResolver.class, classLoader)) {
            builder.keyResolver(resolver.name(), resolver);
        }
        settings.keyResolvers()
                .forEach((name, className) -> builder.keyResolver(
                        name,
                        instantiate(
                                "ratelimit.key-resolvers." + name, className, KeyResolver.class, classLoader, source)));
        BucketStore store = settings.createStore();
        LimitProvider limitStore;
        try {
            limitStore = settings.createLimitStore(store);
        } catch (InvalidRateLimitConfigurationException e) {
            store.close();
            throw e.within(source);
        }
        if (settings.metrics() && micrometerPresent()) {
            builder.listener(MicrometerBinding.globalRegistry(store, limitStore, settings.nearLimit()));
        }
        if (limitStore != null) {
            builder.limitProvider(limitStore, settings.limitCacheTtl());
        }
        builder.listener(listener);
        if (observer != null) {
            builder.observer(observer);
        }
        RateLimiter limiter;
        try {
            limiter = settings.build(builder.store(store));
        } catch (RuntimeException e) {
            // Nothing owns them yet: the limit store's refresh thread and the store's connections go with the error.
            if (limitStore instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            store.close();
            // A value the limiter refuses (ratelimit.plan-from) is located in the file, as the settings' own errors
            // are.
            throw e instanceof InvalidRateLimitConfigurationException invalid ? invalid.within(source) : e;
        }
        return new Settings(
                settings.enabled(),
                limiter,
                settings.rules(),
                settings.headers(),
                handler,
                settings.annotations(),
                settings.trustContainerForwarding(),
                settings.limitProvider(),
                limitStore,
                settings.planRules(),
                settings.planFrom(),
                store);
    }

    /** @return whether Micrometer is on the class path, so {@link MicrometerBinding} may be linked */
    static boolean micrometerPresent() {
        try {
            // Not MicrometerBinding's own question: linking that class loads Micrometer's types.
            Class.forName("io.micrometer.core.instrument.MeterRegistry", false, RulesFile.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    private static <T> T instantiate(
            String property, String className, Class<T> type, ClassLoader classLoader, String source) {
        try {
            Class<?> c = Class.forName(className, true, classLoader);
            if (!type.isAssignableFrom(c)) {
                throw new InvalidRateLimitConfigurationException(
                                property,
                                className,
                                "'" + className + "' is not a " + type.getName(),
                                "Implement " + type.getSimpleName() + ".")
                        .within(source);
            }
            return type.cast(c.getDeclaredConstructor().newInstance());
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new InvalidRateLimitConfigurationException(
                    source + ": " + property + " = '" + className
                            + "' cannot be instantiated (" + e + "). Give a " + type.getSimpleName()
                            + " class with a public "
                            + "no-argument constructor on the web application's class path.",
                    e);
        }
    }

    static String resolvePlaceholders(String value, String name, String source) {
        if (value.indexOf("${") < 0) {
            return value;
        }
        Matcher m = PLACEHOLDER.matcher(value);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String key = m.group(1);
            String replacement = System.getProperty(key);
            if (replacement == null) {
                replacement = System.getenv(key);
            }
            if (replacement == null) {
                replacement = m.group(2);
            }
            if (replacement == null) {
                throw new InvalidRateLimitConfigurationException(source + ": " + name + " refers to ${" + key + "}, "
                        + "which is neither a system property nor an environment variable. Set it, or give a default: "
                        + "${" + key + ":value}.");
            }
            m.appendReplacement(sb, Matcher.quoteReplacement(replacement));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    /**
     * @param value the {@code phase} init-param
     * @return the phase it names
     * @throws InvalidRateLimitConfigurationException when it names none, saying how to declare the two filters
     */
    static Phase phase(String value) {
        for (Phase p : Phase.values()) {
            if (p.name().equalsIgnoreCase(value.replace('-', '_'))) {
                return p;
            }
        }
        throw new InvalidRateLimitConfigurationException("init-param phase = '" + value + "' is not one of "
                + "[before-authentication, after-authentication]. Declare the filter once before your authentication "
                + "filter with phase before-authentication, and once after it with phase after-authentication.");
    }
}
