package io.github.ratelimit.spring.boot;

import static io.github.ratelimit.spring.boot.StartupFailures.configError;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.spring.boot.internal.web.reactive.RateLimitWebExceptionHandler;
import io.github.ratelimit.spring.boot.internal.web.reactive.RateLimitWebFilter;
import org.junit.jupiter.api.Test;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.autoproxy.InfrastructureAdvisorAutoProxyCreator;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.PriorityOrdered;

/**
 * Every {@code @RateLimit} that could not take effect stops the application at start-up, with Boot's own AOP
 * auto-configuration proxying the beans; none starts and is then silently ignored, or rejects every call.
 */
class AnnotationsThatCannotApplyTest {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(StarterAutoConfigurations.of(AopAutoConfiguration.class));

    public static class UnknownArgument {
        @RateLimit(key = "#nonexistentArg", perMinute = 5)
        public String call(String userId) {
            return userId;
        }
    }

    public static class UnknownBean {
        @RateLimit(key = "@plans.of(#userId)", perMinute = 5)
        public String call(String userId) {
            return userId;
        }
    }

    public static class KnownReferences {
        @RateLimit(
                name = "known",
                key = "#userId + ':' + #p1 + #args.length + (#request == null ? '' : 'r')",
                perMinute = 1)
        public String call(String userId, int region) {
            return userId;
        }
    }

    public static class ReactiveMethod {
        final java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();

        @RateLimit(name = "reactive", perMinute = 1)
        public org.reactivestreams.Publisher<String> call() {
            runs.incrementAndGet();
            return reactor.core.publisher.Flux.just("x");
        }

        public int runs() {
            return runs.get();
        }
    }

    /** Another library's publisher type, which the advisor could not return in place of the method's. */
    public interface OtherPublisher<T> extends org.reactivestreams.Publisher<T> {}

    public static class ForeignReactiveMethod {
        @RateLimit(perSecond = 1)
        public OtherPublisher<String> call() {
            return subscriber -> {};
        }
    }

    public static class AsyncMethod {
        /** A CompletionStage is under way when returned: deciding at the call is deciding before the work. */
        @RateLimit(name = "async", perSecond = 1)
        public java.util.concurrent.CompletionStage<String> call() {
            return java.util.concurrent.CompletableFuture.completedFuture("x");
        }
    }

    public static class PrivateMethod {
        public String entry() {
            return hidden();
        }

        @RateLimit(perSecond = 1)
        private String hidden() {
            return "x";
        }
    }

    public static class FinalMethod {
        @RateLimit(perSecond = 1)
        public final String call() {
            return "x";
        }
    }

    public static class StaticMethod {
        @RateLimit(perSecond = 1)
        public static String call() {
            return "x";
        }
    }

    /** Type-level: its public instance methods are limited; a static one is not a method of the bean. */
    @RateLimit(name = "typed", perMinute = 1)
    public static class TypeLevelWithStatic {
        public String call() {
            return "x";
        }

        public static String helper() {
            return "h";
        }
    }

    /** A priority-ordered post-processor is created before the auto-proxy creator: nothing can proxy it. */
    public static class EarlyBean implements BeanPostProcessor, PriorityOrdered {
        @Override
        public int getOrder() {
            return 0;
        }

        @RateLimit(perSecond = 1)
        public String call() {
            return "x";
        }
    }

    public interface Greeter {
        String greet();
    }

    public static class InterfaceBean implements Greeter {
        @Override
        @RateLimit(name = "greet", perMinute = 1)
        public String greet() {
            return "hi";
        }

        @RateLimit(name = "hidden", perMinute = 1)
        public String notOnTheInterface() {
            return "x";
        }
    }

    public static class OnlyInterfaceMethods implements Greeter {
        @Override
        @RateLimit(name = "greet-only", perMinute = 1)
        public String greet() {
            return "hi";
        }
    }

    @Test
    void aSpelKeyNamingAParameterTheMethodDoesNotHaveStopsStartUp() {
        runner.withBean(UnknownArgument.class)
                .run(
                        context -> assertThat(configError(context))
                                .hasMessage(
                                        "@RateLimit on UnknownArgument#call(String): key '#nonexistentArg' refers to #nonexistentArg, which a "
                                                + "call of this method does not provide, so no call would have a key. Available: [#userId, "
                                                + "#p0, #a0, #args, #request, #exchange, #root, #this]. Refer to one of them."));
    }

    @Test
    void aSpelKeyNamingABeanThatDoesNotExistStopsStartUp() {
        runner.withBean(UnknownBean.class)
                .run(context -> assertThat(configError(context))
                        .hasMessage(
                                "@RateLimit on UnknownBean#call(String): key '@plans.of(#userId)' refers to bean @plans, which does not "
                                        + "exist. Define the bean, or correct its name."));
    }

    @Test
    void aSpelKeyReferringOnlyToWhatTheCallProvidesStartsAndDecides() {
        runner.withBean(KnownReferences.class).run(context -> {
            assertThat(context).hasNotFailed();
            KnownReferences bean = context.getBean(KnownReferences.class);
            assertThat(bean.call("alice", 1)).isEqualTo("alice");
            assertThatThrownBy(() -> bean.call("alice", 1)).isInstanceOf(RateLimitExceededException.class);
            assertThat(bean.call("bob", 1)).isEqualTo("bob");
        });
    }

    @Test
    void aMethodReturningAPublisherIsDecidedWhenSubscribedNotWhenCalled() {
        runner.withBean(ReactiveMethod.class).run(context -> {
            assertThat(context).hasNotFailed();
            ReactiveMethod bean = context.getBean(ReactiveMethod.class);
            org.reactivestreams.Publisher<String> first = bean.call();
            org.reactivestreams.Publisher<String> second = bean.call();
            bean.call(); // assembled, never subscribed: costs nothing
            assertThat(bean.runs())
                    .as("the method runs only once a subscription is permitted")
                    .isZero();
            assertThat(reactor.core.publisher.Flux.from(second).collectList().block())
                    .containsExactly("x");
            assertThat(bean.runs()).isEqualTo(1);
            assertThatThrownBy(() -> reactor.core.publisher.Flux.from(first).blockLast())
                    .isInstanceOf(RateLimitExceededException.class);
            assertThat(bean.runs())
                    .as("a rejected subscription does not run the method")
                    .isEqualTo(1);
        });
        runner.withBean(ReactiveMethod.class).run(context -> {
            ReactiveMethod bean = context.getBean(ReactiveMethod.class);
            org.reactivestreams.Publisher<String> once = bean.call();
            assertThat(reactor.core.publisher.Flux.from(once).collectList().block())
                    .containsExactly("x");
            // Subscribed again (a retry): decided again, and over the limit of one a minute.
            assertThatThrownBy(() -> reactor.core.publisher.Flux.from(once).blockLast())
                    .isInstanceOf(RateLimitExceededException.class);
            assertThat(bean.runs()).isEqualTo(1);
        });
        runner.withBean(AsyncMethod.class).run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void aMethodReturningAnotherLibrarysPublisherStopsStartUp() {
        runner.withBean(ForeignReactiveMethod.class)
                .run(
                        context -> assertThat(configError(context))
                                .hasMessageStartingWith(
                                        "@RateLimit on ForeignReactiveMethod#call(), which returns a "
                                                + OtherPublisher.class.getName()
                                                + ": reactive methods are rate limited when subscribed to, "
                                                + "through Project Reactor, so they must be declared to return a Mono, a Flux or a Publisher."));
    }

    @Test
    void aReactiveWebApplicationGetsTheWebFilterAndTheExceptionHandler() {
        new org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner()
                .withConfiguration(StarterAutoConfigurations.of(AopAutoConfiguration.class))
                .withPropertyValues(
                        "ratelimit.rules[0].name=api",
                        "ratelimit.rules[0].paths=/api/**",
                        "ratelimit.rules[0].limits=5/1s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean("rateLimitWebFilter", RateLimitWebFilter.class)
                                    .getOrder())
                            .isEqualTo(-99);
                    assertThat(context.getBean("rateLimitBeforeAuthenticationWebFilter", RateLimitWebFilter.class)
                                    .getOrder())
                            .isEqualTo(-101);
                    assertThat(context).hasSingleBean(RateLimitWebExceptionHandler.class);
                    assertThat(context).doesNotHaveBean("rateLimitFilter");
                });
        org.springframework.web.server.WebExceptionHandler own =
                (exchange, ex) -> reactor.core.publisher.Mono.error(ex);
        new org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner()
                .withConfiguration(StarterAutoConfigurations.of(AopAutoConfiguration.class))
                .withBean(
                        "rateLimitWebExceptionHandler",
                        org.springframework.web.server.WebExceptionHandler.class,
                        () -> own)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(RateLimitWebExceptionHandler.class);
                    assertThat(context.getBean("rateLimitWebExceptionHandler"))
                            .as("the application's")
                            .isSameAs(own);
                });
    }

    @Test
    void privateFinalAndStaticMethodsStopStartUp() {
        runner.withBean(PrivateMethod.class)
                .run(context -> assertThat(configError(context))
                        .hasMessage(
                                "@RateLimit on PrivateMethod#hidden(): the method is private, so a Spring proxy cannot intercept it "
                                        + "and the limit would never apply. Make the method public (or protected) and neither static "
                                        + "nor final, or move the limit to a method that is."));
        runner.withBean(FinalMethod.class)
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith("@RateLimit on FinalMethod#call(): the method is final,"));
        runner.withBean(StaticMethod.class)
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith("@RateLimit on StaticMethod#call(): the method is static,"));
    }

    @Test
    void aTypeLevelLimitCoversInstanceMethodsOnlyAndIsListedOnlyForThem() {
        runner.withBean(TypeLevelWithStatic.class).run(context -> {
            assertThat(context).hasNotFailed();
            TypeLevelWithStatic bean = context.getBean(TypeLevelWithStatic.class);
            bean.call();
            assertThatThrownBy(bean::call).isInstanceOf(RateLimitExceededException.class);
            assertThat(context.getBean(RateLimiter.class).rules())
                    .extracting(Rule::name)
                    .containsExactly("typed");
        });
    }

    @Test
    void aBeanTheAdvisorCannotProxyStopsStartUp() {
        runner.withBean(EarlyBean.class)
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith(
                                "@RateLimit on EarlyBean#call(): bean 'annotationsThatCannotApplyTest.EarlyBean' is not proxied by the "
                                        + "rate-limit advisor, so its limits would never apply."));
    }

    @Test
    void withoutAnyAutoProxyCreatorStartUpStops() {
        runner.withPropertyValues("spring.aop.auto=false")
                .withBean(OnlyInterfaceMethods.class)
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith(
                                "@RateLimit on OnlyInterfaceMethods#greet(): bean 'annotationsThatCannotApplyTest."
                                        + "OnlyInterfaceMethods' is not proxied by the rate-limit advisor, so its limits would "
                                        + "never apply. Either no auto-proxy creator is active"));
    }

    @Test
    void aMethodAJdkProxyDoesNotExposeStopsStartUp() {
        // Interface proxies, as @EnableTransactionManagement's default auto-proxy creator makes them.
        ApplicationContextRunner jdkProxies = runner.withPropertyValues("spring.aop.auto=false")
                .withBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME, InfrastructureAdvisorAutoProxyCreator.class);
        jdkProxies
                .withBean(InterfaceBean.class)
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith(
                                "@RateLimit on InterfaceBean#notOnTheInterface(): bean 'annotationsThatCannotApplyTest."
                                        + "InterfaceBean' is a JDK interface proxy, and no interface it exposes declares the "
                                        + "method"));
        jdkProxies.withBean(Greeter.class, OnlyInterfaceMethods::new).run(context -> {
            assertThat(context).hasNotFailed();
            Greeter greeter = context.getBean(Greeter.class);
            greeter.greet();
            assertThatThrownBy(greeter::greet).isInstanceOf(RateLimitExceededException.class);
        });
    }
}
