package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.internal.config.RateLimitSettings;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;

/**
 * How Spring binds {@code ratelimit.*}: before anything is bound, every name in the environment is checked against the
 * model, so a typo ({@code ratelimit.rules[0].limts}) stops start-up naming the nearest known property rather than
 * leaving a list element unbound; and a value Spring cannot convert is refused with the message the rules file gives
 * ({@link RateLimitSettings#checkText}). Other prefixes bind as they would without it.
 */
final class RateLimitBinding extends AbstractBindHandler {

    private static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("ratelimit");

    private final Environment environment;

    /**
     * @param parent the handler this one wraps
     * @param environment where the names come from
     */
    RateLimitBinding(BindHandler parent, Environment environment) {
        super(parent);
        this.environment = environment;
    }

    @Override
    public <T> @Nullable Bindable<T> onStart(ConfigurationPropertyName name, Bindable<T> target, BindContext context) {
        if (context.getDepth() == 0 && name.equals(ROOT)) {
            RateLimitSettings.checkNames(propertyNames(environment), RateLimitSettings.EntryPoint.SPRING_BOOT);
        }
        return super.onStart(name, target, context);
    }

    @Override
    public @Nullable Object onFailure(
            ConfigurationPropertyName name, Bindable<?> target, BindContext context, Exception error) throws Exception {
        ConfigurationProperty property = context.getConfigurationProperty();
        if (ROOT.isAncestorOf(name)
                && property != null
                && property.getValue() != null
                && !(error instanceof InvalidRateLimitConfigurationException)) {
            RateLimitSettings.checkText(name.toString(), property.getValue().toString());
        }
        return super.onFailure(name, target, context, error);
    }

    /** Every {@code ratelimit.*} name in the environment, canonical: what a user wrote, typos included. */
    static List<String> propertyNames(Environment environment) {
        List<String> names = new ArrayList<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (source instanceof IterableConfigurationPropertySource iterable) {
                iterable.stream()
                        .filter(ROOT::isAncestorOf)
                        .map(ConfigurationPropertyName::toString)
                        .forEach(names::add);
            }
        }
        return names;
    }
}
