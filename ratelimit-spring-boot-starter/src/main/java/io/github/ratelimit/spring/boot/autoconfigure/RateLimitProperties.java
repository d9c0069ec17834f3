package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.config.RateLimitConfig;
import io.github.ratelimit.internal.config.RateLimitSettings;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Rate limiting, under {@code ratelimit.*}: Spring binds the core's configuration model, {@link RateLimitConfig},
 * directly (relaxed names, profiles, YAML lists), and the starter reads it with {@link RateLimitSettings}, as the
 * servlet filter reads its rules file. The defaults are the model's field initializers; the model's
 * {@link RateLimitConfig.Described} annotations say what each property does, and the additional configuration
 * metadata is generated from them. Unknown names are refused before binding, with the nearest known name.
 */
@ConfigurationProperties("ratelimit")
public class RateLimitProperties extends RateLimitConfig {}
