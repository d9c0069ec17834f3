package io.github.ratelimit.spring.boot.internal.web.servlet;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import jakarta.servlet.http.HttpServletRequest;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.context.request.async.CallableProcessingInterceptor;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.DeferredResultProcessingInterceptor;
import org.springframework.web.context.request.async.WebAsyncManager;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.context.request.async.WebAsyncUtils;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * Ends a handler call that Spring MVC finishes asynchronously ({@link Callable}, {@link WebAsyncTask},
 * {@link DeferredResult}, {@link ResponseBodyEmitter}, {@link StreamingResponseBody}) when its async processing
 * completes, not when the handler method returns, so a concurrency rule's slot is held while the work runs: for
 * handlers whose rules the advisor decides (a key that reads the arguments). Handlers the filter decides are ended
 * by the filter, when the request completes.
 */
final class MvcAsyncEnds {

    private MvcAsyncEnds() {}

    /** @return whether a handler returning {@code type} is finished by Spring MVC's async processing */
    static boolean isAsync(Class<?> type) {
        return Callable.class.isAssignableFrom(type)
                || WebAsyncTask.class.isAssignableFrom(type)
                || DeferredResult.class.isAssignableFrom(type)
                || ResponseBodyEmitter.class.isAssignableFrom(type)
                || StreamingResponseBody.class.isAssignableFrom(type);
    }

    /**
     * Runs the handler, and reports the call's end to {@code guard} once its async processing completes (failed if it
     * ended in an error or a timeout), or at once when the handler throws or returns nothing.
     */
    static Object proceed(MethodInvocation invocation, HttpServletRequest request, Guard guard, Decision decision)
            throws Throwable {
        AtomicBoolean ended = new AtomicBoolean();
        AtomicBoolean failed = new AtomicBoolean();
        Runnable end = () -> {
            if (ended.compareAndSet(false, true)) {
                guard.completed(decision, failed.get());
            }
        };
        WebAsyncManager async = WebAsyncUtils.getAsyncManager(request);
        Object key = new Object();
        async.registerCallableInterceptor(key, new CallableProcessingInterceptor() {
            @Override
            public <T> Object handleError(NativeWebRequest r, Callable<T> task, Throwable t) {
                failed.set(true);
                return RESULT_NONE;
            }

            @Override
            public <T> Object handleTimeout(NativeWebRequest r, Callable<T> task) {
                failed.set(true);
                return RESULT_NONE;
            }

            @Override
            public <T> void afterCompletion(NativeWebRequest r, Callable<T> task) {
                end.run();
            }
        });
        async.registerDeferredResultInterceptor(key, new DeferredResultProcessingInterceptor() {
            @Override
            public <T> boolean handleError(NativeWebRequest r, DeferredResult<T> result, Throwable t) {
                failed.set(true);
                return true;
            }

            @Override
            public <T> boolean handleTimeout(NativeWebRequest r, DeferredResult<T> result) {
                failed.set(true);
                return true;
            }

            @Override
            public <T> void afterCompletion(NativeWebRequest r, DeferredResult<T> result) {
                end.run();
            }
        });
        Object result;
        try {
            result = invocation.proceed();
        } catch (Throwable t) {
            failed.set(true);
            end.run();
            throw t;
        }
        if (result == null) {
            end.run();
        }
        return result;
    }
}
