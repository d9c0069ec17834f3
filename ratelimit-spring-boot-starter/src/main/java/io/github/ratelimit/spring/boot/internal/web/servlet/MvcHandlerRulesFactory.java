package io.github.ratelimit.spring.boot.internal.web.servlet;

import io.github.ratelimit.servlet.HandlerRules;
import io.github.ratelimit.spring.boot.internal.method.SpelKeyResolverFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/**
 * Creates {@link MvcHandlerRules}; a bean only where Spring MVC is on the class path, so the filter's
 * configuration names no Spring MVC type.
 */
public final class MvcHandlerRulesFactory {

    private final ConfigurableListableBeanFactory beanFactory;

    public MvcHandlerRulesFactory(ConfigurableListableBeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    public HandlerRules create() {
        SpelKeyResolverFactory spel = new SpelKeyResolverFactory(beanFactory);
        return new MvcHandlerRules(beanFactory, spel::readsInvocation);
    }
}
